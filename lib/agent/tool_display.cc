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

OutputTail LastLines(absl::string_view output, size_t max_lines) {
  OutputTail tail;
  if (output.empty()) return tail;
  absl::string_view body = output;
  if (body.back() == '\n') body.remove_suffix(1);
  size_t lines = 1;
  for (char c : body) lines += c == '\n';
  tail.total_lines = lines;
  const size_t keep = std::min(lines, max_lines);
  // The start of the first kept line: just after the keep-th line break
  // from the end.
  size_t start = 0;
  size_t position = body.size();
  for (size_t i = 0; i < keep; ++i) {
    size_t newline = position == 0 ? absl::string_view::npos
                                   : body.rfind('\n', position - 1);
    if (newline == absl::string_view::npos) {
      start = 0;
      break;
    }
    position = newline;
    start = newline + 1;
  }
  if (keep == 0) start = body.size();
  tail.text = std::string(body.substr(start));
  if (keep > 0) tail.text.push_back('\n');
  tail.lines_cut = lines - keep;
  return tail;
}

}  // namespace agent
}  // namespace garuda
