// SHA-256, one implementation for every program: the audit chain's line
// hashes, the change list's content fingerprints, and the hashes in the
// names of ~/.garuda's folders (lib/base/home.h).
//
// OpenSSL's low-level SHA256_Init/Update/Final: the same assembly as EVP
// (the CPU's SHA instructions when it has them), without OpenSSL 3's
// provider machinery, which a statically linked program that starts once
// per command (garuda-stager) would pay for at every start (some 90 page
// faults and 2 ms of CPU, measured), and without EVP's per-digest context
// allocation and method lookup that the auditor paid per line.
#ifndef GARUDA_LIB_BASE_SHA256_H_
#define GARUDA_LIB_BASE_SHA256_H_

#include <array>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace garuda {

using Sha256Digest = std::array<uint8_t, 32>;

class Sha256 {
 public:
  Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  Sha256& Update(absl::string_view data);
  // The digest of everything given since construction or the last Finish;
  // the object is ready for a new message afterwards.
  Sha256Digest Finish();

 private:
  // OpenSSL's SHA256_CTX (112 bytes), kept opaque so that this header does
  // not bring OpenSSL's deprecated declarations to every includer.
  alignas(8) unsigned char context_[128];
};

// 64 lowercase hex digits, written to out[0..63].
void HexDigestTo(const Sha256Digest& digest, char* out);
// 64 lowercase hex digits.
std::string HexDigest(const Sha256Digest& digest);
// SHA-256 of `data` as 64 lowercase hex digits.
std::string Sha256Hex(absl::string_view data);
// True when `text` is exactly 64 lowercase hex digits.
bool IsHexDigest(absl::string_view text);

// SHA-256 of `data` as its 32 raw bytes (the change list's fingerprints).
std::string Sha256Bytes(absl::string_view data);
// Of everything readable from `fd`, from its current offset, as 32 raw
// bytes.
absl::StatusOr<std::string> Sha256OfFd(int fd);

}  // namespace garuda

#endif  // GARUDA_LIB_BASE_SHA256_H_
