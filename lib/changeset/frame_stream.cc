#include "lib/changeset/frame_stream.h"

#include "absl/strings/str_cat.h"
#include "lib/base/files.h"
#include "lib/ipc/frame_header.h"

namespace garuda {

absl::Status FrameWriter::Write(const google::protobuf::MessageLite& message) {
  size_t size = message.ByteSizeLong();
  if (size > max_frame_bytes_) {
    return absl::ResourceExhaustedError(
        absl::StrCat(name_, ": frame of ", size, " bytes over the ",
                     max_frame_bytes_, "-byte limit"));
  }
  std::string frame(ipc::kFrameHeaderBytes, '\0');
  ipc::EncodeFrameLength(static_cast<uint32_t>(size), &frame[0]);
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
  char prefix[ipc::kFrameHeaderBytes];
  absl::Status status = ReadExact(fd_, prefix, sizeof(prefix));
  if (absl::IsOutOfRange(status)) return status;
  if (!status.ok()) {
    return absl::Status(status.code(),
                        absl::StrCat(name_, ": frame ", frames_ + 1,
                                     " length: ", status.message()));
  }
  uint32_t size = ipc::DecodeFrameLength(prefix);
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
