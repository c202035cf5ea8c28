// Ed25519 (RFC 8032) through OpenSSL: the signatures of the audit log's
// checkpoints and of a witness's cosignatures.
#ifndef GARUDA_LIB_CRYPTO_ED25519_H_
#define GARUDA_LIB_CRYPTO_ED25519_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace garuda {

inline constexpr size_t kEd25519SeedBytes = 32;
inline constexpr size_t kEd25519PublicKeyBytes = 32;
inline constexpr size_t kEd25519SignatureBytes = 64;

// A private key held in memory as its 32-byte seed. Copying is refused so
// that the seed lives in one place, wiped when it goes.
class Ed25519PrivateKey {
 public:
  // A new key from the system's random source (OpenSSL's RAND_bytes).
  static absl::StatusOr<Ed25519PrivateKey> Generate();
  // `seed`: 32 bytes (RFC 8032's private key).
  static absl::StatusOr<Ed25519PrivateKey> FromSeed(absl::string_view seed);

  Ed25519PrivateKey(Ed25519PrivateKey&& other) noexcept;
  Ed25519PrivateKey& operator=(Ed25519PrivateKey&& other) noexcept;
  Ed25519PrivateKey(const Ed25519PrivateKey&) = delete;
  Ed25519PrivateKey& operator=(const Ed25519PrivateKey&) = delete;
  ~Ed25519PrivateKey();

  const std::string& seed() const { return seed_; }
  const std::string& public_key() const { return public_key_; }
  // 64 bytes. Deterministic: the same key and message give the same bytes.
  absl::StatusOr<std::string> Sign(absl::string_view message) const;

 private:
  Ed25519PrivateKey() = default;
  std::string seed_;
  std::string public_key_;
};

// True when `signature` is a valid signature of `message` by `public_key`
// (32 bytes); false for anything else, wrong sizes included.
bool Ed25519Verify(absl::string_view public_key, absl::string_view message,
                   absl::string_view signature);

}  // namespace garuda

#endif  // GARUDA_LIB_CRYPTO_ED25519_H_
