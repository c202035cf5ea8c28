#include "lib/agent/tool_display.h"

#include <cmath>
#include <optional>

#include "absl/strings/str_cat.h"
#include "lib/provider/json.h"
#include "lib/question/question.h"

namespace garuda {
namespace agent {
namespace {

using provider::Value;

constexpr size_t kArgumentChars = 200;

// One line of at most kArgumentChars characters (not cutting a UTF-8
// sequence): the staged question's title says a command the same way
// (lib/question).
std::string Short(absl::string_view text) {
  return OneLineText(text, kArgumentChars);
}

std::string Quoted(absl::string_view text) {
  return absl::StrCat("\"", Short(text), "\"");
}

std::optional<int64_t> WholeNumber(const Value& object,
                                   absl::string_view name) {
  const Value* member = provider::Member(object, name);
  if (member == nullptr || !member->has_number_value()) return std::nullopt;
  double number = member->number_value();
  if (number != std::floor(number) || number < 0 || number > 1e15) {
    return std::nullopt;
  }
  return static_cast<int64_t>(number);
}

std::string Folder(const Value& args) {
  std::string path = provider::StringMember(args, "path");
  return path.empty() || path == "." ? "the project root" : Short(path);
}

std::optional<std::string> Known(absl::string_view tool, const Value& args) {
  auto str = [&](absl::string_view name) {
    return provider::StringMember(args, name);
  };
  if (tool == "bash") {
    if (!provider::HasStringMember(args, "command")) return std::nullopt;
    std::string line = absl::StrCat("bash: ", Short(str("command")));
    const Value* host = provider::Member(args, "outside_sandbox");
    if (host != nullptr && host->has_bool_value() && host->bool_value()) {
      line += " (outside the sandbox)";
    }
    return line;
  }
  if (tool == "read_file") {
    if (!provider::HasStringMember(args, "path")) return std::nullopt;
    std::string line = absl::StrCat("read_file ", Short(str("path")));
    std::optional<int64_t> offset = WholeNumber(args, "offset");
    std::optional<int64_t> limit = WholeNumber(args, "limit");
    if (offset && limit && *limit > 0) {
      absl::StrAppend(&line, " lines ", *offset, "-", *offset + *limit - 1);
    } else if (offset) {
      absl::StrAppend(&line, " from line ", *offset);
    } else if (limit) {
      absl::StrAppend(&line, " lines 1-", *limit);
    }
    return line;
  }
  if (tool == "list_files") {
    std::string line = absl::StrCat("list_files ", Folder(args));
    if (!str("glob").empty()) {
      absl::StrAppend(&line, " matching ", Short(str("glob")));
    }
    return line;
  }
  if (tool == "grep") {
    if (!provider::HasStringMember(args, "pattern")) return std::nullopt;
    std::string line =
        absl::StrCat("grep ", Quoted(str("pattern")), " in ", Folder(args));
    if (!str("glob").empty()) absl::StrAppend(&line, " (", Short(str("glob")), ")");
    return line;
  }
  if (tool == "edit_file" || tool == "write_file") {
    if (!provider::HasStringMember(args, "path")) return std::nullopt;
    std::string line = absl::StrCat(tool, " ", Short(str("path")));
    if (tool == "write_file") {
      absl::StrAppend(&line, " (", str("content").size(), " bytes)");
    } else {
      const Value* all = provider::Member(args, "replace_all");
      if (all != nullptr && all->has_bool_value() && all->bool_value()) {
        line += " (every occurrence)";
      }
    }
    return line;
  }
  // The code tools: a symbol, or a place in a file.
  if (!str("symbol").empty()) {
    return absl::StrCat(tool, " ", Short(str("symbol")));
  }
  if (!str("path").empty()) {
    std::string line = absl::StrCat(tool, " ", Short(str("path")));
    if (std::optional<int64_t> at = WholeNumber(args, "line")) {
      absl::StrAppend(&line, ":", *at);
      if (std::optional<int64_t> column = WholeNumber(args, "column")) {
        absl::StrAppend(&line, ":", *column);
      }
    }
    return line;
  }
  return std::nullopt;
}

}  // namespace

std::string ToolCallSummary(absl::string_view tool,
                            absl::string_view arguments_json,
                            absl::string_view fallback) {
  absl::StatusOr<Value> args = provider::ParseJson(arguments_json, "arguments");
  if (args.ok() && args->has_struct_value()) {
    if (std::optional<std::string> line = Known(tool, *args)) return *line;
  }
  absl::string_view shown = fallback.empty() ? arguments_json : fallback;
  if (shown.empty()) return std::string(tool);
  return absl::StrCat(tool, ": ", Short(shown));
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
    size_t newline =
        position == 0 ? absl::string_view::npos : body.rfind('\n', position - 1);
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
