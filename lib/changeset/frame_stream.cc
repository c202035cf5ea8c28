#include "lib/changeset/frame_stream.h"

#include "absl/strings/str_cat.h"
#include "lib/base/files.h"

namespace garuda {

absl::Status FrameWriter::Write(const google::protobuf::MessageLite& message) {
  size_t size = message.ByteSizeLong();
  if (size > max_frame_bytes_) {
    return absl::ResourceExhaustedError(
        absl::StrCat(name_, ": frame of ", size, " bytes over the ",
                     max_frame_bytes_, "-byte limit"));
  }
  std::string frame(4, '\0');
  for (int i = 0; i < 4; ++i)
    frame[i] = static_cast<char>((size >> (8 * i)) & 0xff);
  if (!message.AppendToString(&frame)) {
    return absl::InternalError(absl::StrCat(name_, ": cannot serialize frame"));
  }
  absl::Status status = WriteAll(fd_, frame);
  if (!status.ok()) {
    return absl::Status(status.code(),
                        absl::StrCat(name_, ": ", status.message()));
  }
  return absl::OkStatus();
}

absl::Status FrameReader::Read(google::protobuf::MessageLite* message) {
  unsigned char prefix[4];
  absl::Status status = ReadExact(fd_, prefix, sizeof(prefix));
  if (absl::IsOutOfRange(status)) return status;
  if (!status.ok()) {
    return absl::Status(status.code(),
                        absl::StrCat(name_, ": frame ", frames_ + 1,
                                     " length: ", status.message()));
  }
  uint32_t size = prefix[0] | (prefix[1] << 8) | (prefix[2] << 16) |
                  (static_cast<uint32_t>(prefix[3]) << 24);
  if (size > max_frame_bytes_) {
    return absl::ResourceExhaustedError(
        absl::StrCat(name_, ": frame ", frames_ + 1, " of ", size,
                     " bytes over the ", max_frame_bytes_, "-byte limit"));
  }
  buffer_.resize(size);
  status = ReadExact(fd_, buffer_.data(), size);
  if (!status.ok() && size > 0) {
    return absl::DataLossError(absl::StrCat(name_, ": frame ", frames_ + 1,
                                            " truncated: ", status.message()));
  }
  if (!message->ParseFromString(buffer_)) {
    return absl::InvalidArgumentError(
        absl::StrCat(name_, ": frame ", frames_ + 1, " does not parse as ",
                     message->GetTypeName()));
  }
  ++frames_;
  return absl::OkStatus();
}

}  // namespace garuda
