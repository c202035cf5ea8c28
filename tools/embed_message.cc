// embed_message: a build tool. Reads a JSON file into a protobuf message
// with the strict reader of lib/base/json_message.h (an unknown field or a
// wrong type fails the build, naming the file and the field) and prints the
// message's binary encoding as a C++ string literal and its length:
//
//   embed_message garuda.SeccompPolicy policies/seccomp/common.json
//   -> "\012\003..." , 123
//
// A program that compiles a policy in then decodes the binary form at start
// (ParseFromArray) instead of running protobuf's JSON reader on every start.
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"
#include "lib/base/json_message.h"
#include "proto/sandbox_policy.pb.h"
#include "proto/seccomp_policy.pb.h"

namespace {

constexpr char kUsage[] =
    "usage: embed_message MESSAGE_TYPE JSON_FILE\n"
    "  prints JSON_FILE, read as MESSAGE_TYPE (e.g. garuda.SeccompPolicy),\n"
    "  as a C++ string literal of its binary encoding, a comma, and its\n"
    "  length in bytes\n";

// The message types this tool knows.
const google::protobuf::Message* const kKnownTypes[] = {
    &garuda::SeccompPolicy::default_instance(),
    &garuda::SandboxDefaults::default_instance(),
};

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "--help") == 0) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (argc != 3) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  const google::protobuf::Message* prototype = nullptr;
  for (const google::protobuf::Message* known : kKnownTypes) {
    if (known->GetDescriptor()->full_name() == argv[1]) prototype = known;
  }
  if (prototype == nullptr) {
    std::fprintf(stderr,
                 "embed_message: \"%s\" is not a message type this tool "
                 "knows (add it to kKnownTypes and its cc_proto to "
                 "//tools:embed_message)\n",
                 argv[1]);
    return 1;
  }
  std::unique_ptr<google::protobuf::Message> message(prototype->New());
  // Build inputs are links into the source tree (Bazel sandbox).
  absl::Status read = garuda::ReadJsonMessageFile(argv[2], message.get(),
                                                  garuda::JsonFileOptions(true));
  if (!read.ok()) {
    std::fprintf(stderr, "embed_message: %s\n",
                 std::string(read.message()).c_str());
    return 1;
  }
  std::string binary;
  if (!message->SerializeToString(&binary)) {
    std::fprintf(stderr, "embed_message: %s: cannot encode the message\n",
                 argv[2]);
    return 1;
  }
  // Three-digit octal escapes: a following character can never extend one.
  std::string literal = "\"";
  for (size_t i = 0; i < binary.size(); ++i) {
    if (i > 0 && i % 32 == 0) literal += "\"\n\"";
    char escape[8];
    std::snprintf(escape, sizeof escape, "\\%03o",
                  static_cast<unsigned char>(binary[i]));
    literal += escape;
  }
  literal += "\"";
  std::printf("%s, %zu", literal.c_str(), binary.size());
  return 0;
}
