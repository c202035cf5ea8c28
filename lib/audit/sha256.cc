#include "lib/audit/sha256.h"

#include <openssl/evp.h>

#include <cstdio>
#include <cstdlib>

namespace garuda {
namespace {

void Die(const char* what) {
  std::fprintf(stderr, "garuda: OpenSSL %s failed\n", what);
  std::abort();
}

}  // namespace

void Sha256::FreeContext::operator()(evp_md_ctx_st* context) const {
  EVP_MD_CTX_free(context);
}

Sha256::Sha256() : context_(EVP_MD_CTX_new()) {
  if (context_ == nullptr) Die("EVP_MD_CTX_new");
  if (EVP_DigestInit_ex(context_.get(), EVP_sha256(), nullptr) != 1) {
    Die("EVP_DigestInit_ex(sha256)");
  }
}

Sha256& Sha256::Update(absl::string_view data) {
  if (EVP_DigestUpdate(context_.get(), data.data(), data.size()) != 1) {
    Die("EVP_DigestUpdate");
  }
  return *this;
}

Sha256Digest Sha256::Finish() {
  Sha256Digest digest;
  unsigned int size = 0;
  if (EVP_DigestFinal_ex(context_.get(), digest.data(), &size) != 1 ||
      size != digest.size()) {
    Die("EVP_DigestFinal_ex");
  }
  if (EVP_DigestInit_ex(context_.get(), EVP_sha256(), nullptr) != 1) {
    Die("EVP_DigestInit_ex(sha256)");
  }
  return digest;
}

std::string HexDigest(const Sha256Digest& digest) {
  static const char kHex[] = "0123456789abcdef";
  std::string out(64, '0');
  for (size_t i = 0; i < digest.size(); ++i) {
    out[2 * i] = kHex[digest[i] >> 4];
    out[2 * i + 1] = kHex[digest[i] & 0xf];
  }
  return out;
}

std::string Sha256Hex(absl::string_view data) {
  Sha256 sha;
  sha.Update(data);
  return HexDigest(sha.Finish());
}

bool IsHexDigest(absl::string_view text) {
  if (text.size() != 64) return false;
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

}  // namespace garuda
