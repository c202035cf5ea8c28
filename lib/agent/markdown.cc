#include "lib/agent/markdown.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace garuda {
namespace agent {
namespace {

constexpr char kBold[] = "\x1b[1m";
constexpr char kBoldOff[] = "\x1b[22m";
constexpr char kCode[] = "\x1b[36m";
constexpr char kColorOff[] = "\x1b[39m";
constexpr char kDim[] = "\x1b[2m";
constexpr char kReset[] = "\x1b[0m";

size_t Indent(absl::string_view line) {
  size_t n = 0;
  while (n < line.size() && line[n] == ' ') ++n;
  return n;
}

bool IsFence(absl::string_view line) {
  absl::string_view rest = line.substr(std::min(Indent(line), line.size()));
  return absl::StartsWith(rest, "```") || absl::StartsWith(rest, "~~~");
}

bool IsRule(absl::string_view line) {
  std::string compact;
  for (char c : line) {
    if (c != ' ') compact.push_back(c);
  }
  if (compact.size() < 3) return false;
  char mark = compact[0];
  if (mark != '-' && mark != '*' && mark != '_') return false;
  return compact.find_first_not_of(mark) == std::string::npos;
}

}  // namespace

std::string MarkdownInline(absl::string_view text) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    if (text[i] == '`') {
      size_t close = text.find('`', i + 1);
      if (close != absl::string_view::npos && close > i + 1) {
        absl::StrAppend(&out, kCode, text.substr(i + 1, close - i - 1),
                        kColorOff);
        i = close + 1;
        continue;
      }
    }
    if ((text[i] == '*' || text[i] == '_') && i + 1 < text.size() &&
        text[i + 1] == text[i]) {
      const char mark[3] = {text[i], text[i], '\0'};
      size_t close = text.find(mark, i + 2);
      // Bold needs text inside that does not start or end with a space.
      if (close != absl::string_view::npos && close > i + 2 &&
          text[i + 2] != ' ' && text[close - 1] != ' ') {
        absl::StrAppend(&out, kBold,
                        MarkdownInline(text.substr(i + 2, close - i - 2)),
                        kBoldOff);
        i = close + 2;
        continue;
      }
      out.append(mark);
      i += 2;
      continue;
    }
    out.push_back(text[i]);
    ++i;
  }
  return out;
}

std::string MarkdownRenderer::Line(absl::string_view line) {
  if (IsFence(line)) {
    in_code_ = !in_code_;
    return absl::StrCat(kDim, line, kReset);
  }
  if (in_code_) return absl::StrCat(kCode, line, kReset);
  const size_t indent = Indent(line);
  absl::string_view rest = line.substr(indent);
  // # Heading (at most three spaces before it, as markdown has it).
  if (indent < 4 && absl::StartsWith(rest, "#")) {
    size_t level = 0;
    while (level < rest.size() && rest[level] == '#') ++level;
    if (level <= 6 && (level == rest.size() || rest[level] == ' ')) {
      absl::string_view title =
          absl::StripAsciiWhitespace(rest.substr(level));
      return absl::StrCat(kBold, level == 1 ? "\x1b[4m" : "",
                          MarkdownInline(title), kReset);
    }
  }
  if (IsRule(line)) return absl::StrCat(kDim, "----------------", kReset);
  // - item, * item, + item: a bullet.
  if (rest.size() >= 2 && (rest[0] == '-' || rest[0] == '*' || rest[0] == '+') &&
      rest[1] == ' ') {
    return absl::StrCat(std::string(indent, ' '), "\xe2\x80\xa2 ",
                        MarkdownInline(rest.substr(2)));
  }
  // 1. item: the number in bold.
  size_t digits = 0;
  while (digits < rest.size() && absl::ascii_isdigit(rest[digits])) ++digits;
  if (digits > 0 && digits + 1 < rest.size() &&
      (rest[digits] == '.' || rest[digits] == ')') && rest[digits + 1] == ' ') {
    return absl::StrCat(std::string(indent, ' '), kBold,
                        rest.substr(0, digits + 1), kBoldOff, " ",
                        MarkdownInline(rest.substr(digits + 2)));
  }
  // > quote
  if (indent < 4 && absl::StartsWith(rest, ">")) {
    absl::string_view quoted = rest.substr(1);
    if (absl::StartsWith(quoted, " ")) quoted.remove_prefix(1);
    return absl::StrCat(kDim, "| ", kReset, MarkdownInline(quoted));
  }
  return MarkdownInline(line);
}

std::string MarkdownRenderer::Feed(absl::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\n') {
      absl::StrAppend(&out, Line(partial_), "\n");
      partial_.clear();
    } else {
      partial_.push_back(c);
    }
  }
  return out;
}

std::string MarkdownRenderer::Finish() {
  std::string out;
  if (!partial_.empty()) out = Line(partial_);
  partial_.clear();
  in_code_ = false;
  return out;
}

}  // namespace agent
}  // namespace garuda
