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

// Fetched once: OpenSSL 3 looks an implicit EVP_sha256() up (under a lock)
// at every init, which costs more than hashing a short line.
const EVP_MD* Sha256Method() {
  static const EVP_MD* const method = [] {
    EVP_MD* fetched = EVP_MD_fetch(nullptr, "SHA256", nullptr);
    if (fetched == nullptr) Die("EVP_MD_fetch(SHA256)");
    return fetched;
  }();
  return method;
}

}  // namespace

void Sha256::FreeContext::operator()(evp_md_ctx_st* context) const {
  EVP_MD_CTX_free(context);
}

Sha256::Sha256() : context_(EVP_MD_CTX_new()) {
  if (context_ == nullptr) Die("EVP_MD_CTX_new");
  if (EVP_DigestInit_ex2(context_.get(), Sha256Method(), nullptr) != 1) {
    Die("EVP_DigestInit_ex2(SHA256)");
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
  if (EVP_DigestInit_ex2(context_.get(), Sha256Method(), nullptr) != 1) {
    Die("EVP_DigestInit_ex2(SHA256)");
  }
  return digest;
}

void HexDigestTo(const Sha256Digest& digest, char* out) {
  static const char kHex[] = "0123456789abcdef";
  for (size_t i = 0; i < digest.size(); ++i) {
    out[2 * i] = kHex[digest[i] >> 4];
    out[2 * i + 1] = kHex[digest[i] & 0xf];
  }
}

std::string HexDigest(const Sha256Digest& digest) {
  std::string out(64, '0');
  HexDigestTo(digest, out.data());
  return out;
}

std::string Sha256Hex(absl::string_view data) {
  Sha256 sha;
  sha.Update(data);
  return HexDigest(sha.Finish());
}

bool IsHexDigest(absl::string_view text) {
  if (text.size() != 64) return false;
  bool ok = true;
  for (char c : text) {
    ok &= (c >= '0' && c <= '9') | (c >= 'a' && c <= 'f');
  }
  return ok;
}

}  // namespace garuda
