#include "lib/base/sha256.h"

#include <openssl/sha.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "lib/base/errno_status.h"

// The low-level interface is deprecated in OpenSSL 3.0 but shipped, with the
// same assembly as EVP; why we use it is in sha256.h. The warning is
// silenced in this file only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace garuda {
namespace {

static_assert(sizeof(SHA256_CTX) <= 128 && alignof(SHA256_CTX) <= 8,
              "Sha256::context_ must hold a SHA256_CTX");

SHA256_CTX* Context(unsigned char* storage) {
  return reinterpret_cast<SHA256_CTX*>(storage);
}

// SHA256_Init/Update/Final only fail on a null pointer.
void Check(int ok, const char* what) {
  if (ok != 1) {
    std::fprintf(stderr, "garuda: OpenSSL %s failed\n", what);
    std::abort();
  }
}

}  // namespace

Sha256::Sha256() { Check(SHA256_Init(Context(context_)), "SHA256_Init"); }

Sha256& Sha256::Update(absl::string_view data) {
  Check(SHA256_Update(Context(context_), data.data(), data.size()),
        "SHA256_Update");
  return *this;
}

Sha256Digest Sha256::Finish() {
  Sha256Digest digest;
  Check(SHA256_Final(digest.data(), Context(context_)), "SHA256_Final");
  Check(SHA256_Init(Context(context_)), "SHA256_Init");
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

std::string Sha256Bytes(absl::string_view data) {
  Sha256 sha;
  sha.Update(data);
  Sha256Digest digest = sha.Finish();
  return std::string(reinterpret_cast<const char*>(digest.data()),
                     digest.size());
}

absl::StatusOr<std::string> Sha256OfFd(int fd) {
  Sha256 sha;
  std::string buffer(1 << 16, '\0');
  for (;;) {
    ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return LastErrnoStatus("read");
    }
    if (n == 0) break;
    sha.Update(absl::string_view(buffer.data(), static_cast<size_t>(n)));
  }
  Sha256Digest digest = sha.Finish();
  return std::string(reinterpret_cast<const char*>(digest.data()),
                     digest.size());
}

}  // namespace garuda

#pragma GCC diagnostic pop
