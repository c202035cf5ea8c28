// The length prefix in front of every frame, shared by the socket channel
// (lib/ipc/channel.h) and the frame streams over pipes and files
// (lib/changeset/frame_stream.h): four bytes, little-endian.
#ifndef GARUDA_LIB_IPC_FRAME_HEADER_H_
#define GARUDA_LIB_IPC_FRAME_HEADER_H_

#include <cstddef>
#include <cstdint>

namespace garuda {
namespace ipc {

// Size of the length prefix in front of every frame.
inline constexpr size_t kFrameHeaderBytes = 4;

inline void EncodeFrameLength(uint32_t length, char* out) {
  for (size_t i = 0; i < kFrameHeaderBytes; ++i) {
    out[i] = static_cast<char>((length >> (8 * i)) & 0xff);
  }
}

inline uint32_t DecodeFrameLength(const char* in) {
  uint32_t length = 0;
  for (size_t i = 0; i < kFrameHeaderBytes; ++i) {
    length |= static_cast<uint32_t>(static_cast<unsigned char>(in[i]))
              << (8 * i);
  }
  return length;
}

}  // namespace ipc
}  // namespace garuda

#endif  // GARUDA_LIB_IPC_FRAME_HEADER_H_
