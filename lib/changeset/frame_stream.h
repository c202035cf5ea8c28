// Length-prefixed protobuf frames on a plain descriptor (a pipe or a file):
// a 4-byte little-endian length, then one serialized message. This is the
// same frame layout as lib/ipc's Channel, for streams where there is no
// socket (a ChangeSet on stdin/stdout, an undo record on disk).
#ifndef GARUDA_LIB_CHANGESET_FRAME_STREAM_H_
#define GARUDA_LIB_CHANGESET_FRAME_STREAM_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "google/protobuf/message_lite.h"

namespace garuda {

inline constexpr uint32_t kDefaultMaxFrameBytes = 1 << 20;

class FrameWriter {
 public:
  // Does not own `fd`. `name` starts every error ("stdout", a file name).
  FrameWriter(int fd, std::string name,
              uint32_t max_frame_bytes = kDefaultMaxFrameBytes)
      : fd_(fd), name_(std::move(name)), max_frame_bytes_(max_frame_bytes) {}
  absl::Status Write(const google::protobuf::MessageLite& message);

 private:
  int fd_;
  std::string name_;
  uint32_t max_frame_bytes_;
};

class FrameReader {
 public:
  FrameReader(int fd, std::string name,
              uint32_t max_frame_bytes = kDefaultMaxFrameBytes)
      : fd_(fd), name_(std::move(name)), max_frame_bytes_(max_frame_bytes) {}
  // OUT_OF_RANGE: clean end of stream between frames. DATA_LOSS: a truncated
  // frame. RESOURCE_EXHAUSTED: a frame over the limit. INVALID_ARGUMENT:
  // bytes that do not parse. Errors name the stream and the frame number.
  absl::Status Read(google::protobuf::MessageLite* message);
  uint64_t frames_read() const { return frames_; }

 private:
  int fd_;
  std::string name_;
  uint32_t max_frame_bytes_;
  uint64_t frames_ = 0;
  std::string buffer_;
};

}  // namespace garuda

#endif  // GARUDA_LIB_CHANGESET_FRAME_STREAM_H_
