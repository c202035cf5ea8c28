#include "lib/agent/tool_display.h"

#include "absl/strings/str_cat.h"
#include "lib/tools/builtin_tools.h"

namespace garuda {
namespace agent {
std::string ToolCallSummary(absl::string_view tool,
                            absl::string_view arguments_json,
                            absl::string_view fallback) {
  return BuiltinSpecs().Summary(tool, arguments_json, fallback);
}

std::string CapturedOutput(const stager::CommandResult& result, bool headers) {
  std::string text;
  auto part = [&text, headers](absl::string_view name, const std::string& data,
                               bool truncated) {
    if (data.empty()) return;
    if (headers) absl::StrAppend(&text, name, ":\n");
    text += data;
    if (data.back() != '\n') text.push_back('\n');
    if (truncated) {
      absl::StrAppend(&text, "[", name, " was cut after ", data.size(),
                      " bytes]\n");
    }
  };
  part("stdout", result.stdout_data(), result.stdout_truncated());
  part("stderr", result.stderr_data(), result.stderr_truncated());
  return text;
}

}  // namespace agent
}  // namespace garuda
