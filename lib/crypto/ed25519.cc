#include "lib/crypto/ed25519.h"

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <memory>

#include "absl/strings/str_cat.h"

namespace garuda {
namespace {

struct PkeyFree {
  void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
};
struct MdCtxFree {
  void operator()(EVP_MD_CTX* context) const { EVP_MD_CTX_free(context); }
};
using Pkey = std::unique_ptr<EVP_PKEY, PkeyFree>;
using MdCtx = std::unique_ptr<EVP_MD_CTX, MdCtxFree>;

std::string OpenSslError(absl::string_view what) {
  unsigned long code = ERR_get_error();
  char text[256] = "unknown error";
  if (code != 0) ERR_error_string_n(code, text, sizeof(text));
  ERR_clear_error();
  return absl::StrCat(what, ": ", text);
}

const unsigned char* Bytes(absl::string_view data) {
  return reinterpret_cast<const unsigned char*>(data.data());
}

}  // namespace

absl::StatusOr<Ed25519PrivateKey> Ed25519PrivateKey::Generate() {
  std::string seed(kEd25519SeedBytes, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(seed.data()),
                 static_cast<int>(seed.size())) != 1) {
    return absl::InternalError(OpenSslError("RAND_bytes"));
  }
  absl::StatusOr<Ed25519PrivateKey> key = FromSeed(seed);
  OPENSSL_cleanse(seed.data(), seed.size());
  return key;
}

absl::StatusOr<Ed25519PrivateKey> Ed25519PrivateKey::FromSeed(
    absl::string_view seed) {
  if (seed.size() != kEd25519SeedBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("an Ed25519 private key is 32 bytes, not ", seed.size()));
  }
  Pkey pkey(EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nullptr, Bytes(seed),
                                         seed.size()));
  if (pkey == nullptr) {
    return absl::InvalidArgumentError(
        OpenSslError("EVP_PKEY_new_raw_private_key"));
  }
  std::string public_key(kEd25519PublicKeyBytes, '\0');
  size_t length = public_key.size();
  if (EVP_PKEY_get_raw_public_key(
          pkey.get(), reinterpret_cast<unsigned char*>(public_key.data()),
          &length) != 1 ||
      length != kEd25519PublicKeyBytes) {
    return absl::InternalError(OpenSslError("EVP_PKEY_get_raw_public_key"));
  }
  Ed25519PrivateKey key;
  key.seed_ = std::string(seed);
  key.public_key_ = std::move(public_key);
  return key;
}

Ed25519PrivateKey::Ed25519PrivateKey(Ed25519PrivateKey&& other) noexcept
    : seed_(std::move(other.seed_)), public_key_(std::move(other.public_key_)) {
  other.seed_.clear();
}

Ed25519PrivateKey& Ed25519PrivateKey::operator=(
    Ed25519PrivateKey&& other) noexcept {
  if (this != &other) {
    OPENSSL_cleanse(seed_.data(), seed_.size());
    seed_ = std::move(other.seed_);
    public_key_ = std::move(other.public_key_);
    other.seed_.clear();
  }
  return *this;
}

Ed25519PrivateKey::~Ed25519PrivateKey() {
  OPENSSL_cleanse(seed_.data(), seed_.size());
}

absl::StatusOr<std::string> Ed25519PrivateKey::Sign(
    absl::string_view message) const {
  // A key object per signature: OpenSSL keeps the expanded key inside it,
  // and one signature per checkpoint group is far from any hot path.
  Pkey pkey(EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nullptr,
                                         Bytes(seed_), seed_.size()));
  MdCtx context(EVP_MD_CTX_new());
  if (pkey == nullptr || context == nullptr) {
    return absl::InternalError(OpenSslError("Ed25519 key"));
  }
  if (EVP_DigestSignInit(context.get(), nullptr, nullptr, nullptr,
                         pkey.get()) != 1) {
    return absl::InternalError(OpenSslError("EVP_DigestSignInit"));
  }
  std::string signature(kEd25519SignatureBytes, '\0');
  size_t length = signature.size();
  if (EVP_DigestSign(context.get(),
                     reinterpret_cast<unsigned char*>(signature.data()),
                     &length, Bytes(message), message.size()) != 1 ||
      length != kEd25519SignatureBytes) {
    return absl::InternalError(OpenSslError("EVP_DigestSign"));
  }
  return signature;
}

bool Ed25519Verify(absl::string_view public_key, absl::string_view message,
                   absl::string_view signature) {
  if (public_key.size() != kEd25519PublicKeyBytes ||
      signature.size() != kEd25519SignatureBytes) {
    return false;
  }
  Pkey pkey(EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nullptr,
                                        Bytes(public_key), public_key.size()));
  MdCtx context(EVP_MD_CTX_new());
  if (pkey == nullptr || context == nullptr ||
      EVP_DigestVerifyInit(context.get(), nullptr, nullptr, nullptr,
                           pkey.get()) != 1) {
    ERR_clear_error();
    return false;
  }
  bool ok = EVP_DigestVerify(context.get(), Bytes(signature), signature.size(),
                             Bytes(message), message.size()) == 1;
  ERR_clear_error();
  return ok;
}

}  // namespace garuda
