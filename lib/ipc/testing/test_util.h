// Small pieces the lib/ipc tests share: raw frames, raw sends with
// descriptors, and counting this process's open descriptors.
#ifndef GARUDA_LIB_IPC_TESTING_TEST_UTIL_H_
#define GARUDA_LIB_IPC_TESTING_TEST_UTIL_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/message_lite.h"

namespace garuda {
namespace ipc {

// The 4-byte little-endian length prefix.
std::string LengthPrefix(uint32_t length);
// A whole frame: prefix and serialized message.
std::string Frame(const google::protobuf::MessageLite& message);
// One sendmsg of `bytes` with `fds` as SCM_RIGHTS, bypassing every check of
// Channel::Send.
absl::Status SendRaw(int socket, absl::string_view bytes,
                     const std::vector<int>& fds = {});
// The descriptors open in this process now.
std::vector<int> OpenFds();

}  // namespace ipc
}  // namespace garuda

#endif  // GARUDA_LIB_IPC_TESTING_TEST_UTIL_H_
