// SHA-256 through OpenSSL's EVP interface (which picks the CPU's SHA
// instructions when it has them), with the context owned by RAII.
#ifndef GARUDA_LIB_AUDIT_SHA256_H_
#define GARUDA_LIB_AUDIT_SHA256_H_

#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/strings/string_view.h"

struct evp_md_ctx_st;

namespace garuda {

using Sha256Digest = std::array<uint8_t, 32>;

class Sha256 {
 public:
  Sha256();  // CHECK-fails only when OpenSSL cannot allocate a context
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  Sha256& Update(absl::string_view data);
  // The digest of everything given since construction or the last Finish;
  // the object is ready for a new message afterwards.
  Sha256Digest Finish();

 private:
  struct FreeContext {
    void operator()(evp_md_ctx_st* context) const;
  };
  std::unique_ptr<evp_md_ctx_st, FreeContext> context_;
};

// 64 lowercase hex digits, written to out[0..63].
void HexDigestTo(const Sha256Digest& digest, char* out);
// 64 lowercase hex digits.
std::string HexDigest(const Sha256Digest& digest);
// SHA-256 of `data` as 64 lowercase hex digits.
std::string Sha256Hex(absl::string_view data);
// True when `text` is exactly 64 lowercase hex digits.
bool IsHexDigest(absl::string_view text);

}  // namespace garuda

#endif  // GARUDA_LIB_AUDIT_SHA256_H_
