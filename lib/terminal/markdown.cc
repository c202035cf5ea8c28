#include "lib/terminal/markdown.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace garuda {
namespace terminal {
namespace {

constexpr char kBold[] = "\x1b[1m";
constexpr char kBoldOff[] = "\x1b[22m";
constexpr char kCode[] = "\x1b[36m";
constexpr char kColorOff[] = "\x1b[39m";
constexpr char kDim[] = "\x1b[2m";
constexpr char kReset[] = "\x1b[0m";
constexpr char kBullet[] = "\xe2\x80\xa2 ";
// A line start is decided by its first few characters after the indent.
constexpr size_t kLookahead = 8;

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
  size_t used = 0;
  MarkdownInlineStep(text, /*whole=*/true, &out, &used);
  return out;
}

bool MarkdownInlineStep(absl::string_view text, bool whole, std::string* out,
                        size_t* used) {
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == '`') {
      size_t close = text.find('`', i + 1);
      if (close != absl::string_view::npos && close > i + 1) {
        absl::StrAppend(out, kCode, text.substr(i + 1, close - i - 1),
                        kColorOff);
        i = close + 1;
        continue;
      }
      if (close == absl::string_view::npos && !whole) break;  // may close
    } else if (c == '*' || c == '_') {
      if (i + 1 == text.size() && !whole) break;  // may be the first of two
      if (i + 1 < text.size() && text[i + 1] == c) {
        const char mark[3] = {c, c, '\0'};
        size_t close = text.find(mark, i + 2);
        // Bold needs text inside that does not start or end with a space.
        if (close != absl::string_view::npos && close > i + 2 &&
            text[i + 2] != ' ' && text[close - 1] != ' ') {
          absl::StrAppend(out, kBold,
                          MarkdownInline(text.substr(i + 2, close - i - 2)),
                          kBoldOff);
          i = close + 2;
          continue;
        }
        if (close == absl::string_view::npos && !whole && i + 2 < text.size() &&
            text[i + 2] != ' ') {
          break;  // may close later on the line
        }
        if (i + 2 == text.size() && !whole) break;
        out->append(mark);
        i += 2;
        continue;
      }
    }
    out->push_back(c);
    ++i;
  }
  *used = i;
  return i == text.size();
}

// What a line is, from its start: a line of a code block, a fence, a
// heading, a list item, a quote, a rule, or plain text. Empty when the
// start does not tell yet.
std::string MarkdownRenderer::Prefix(absl::string_view start, bool whole,
                                     size_t* skip) {
  *skip = 0;
  const size_t indent = Indent(start);
  absl::string_view rest = start.substr(std::min(indent, start.size()));
  const bool enough = whole || rest.size() >= kLookahead;
  if (in_code_) {
    if (IsFence(start)) {
      if (!whole) return "";
      kind_ = Kind::kFence;
      in_code_ = false;
      return kDim;
    }
    if (!enough && (rest.empty() || rest[0] == '`' || rest[0] == '~')) {
      return "";
    }
    kind_ = Kind::kCode;
    return kCode;
  }
  if (!enough && !rest.empty() &&
      rest.find_first_not_of("#-*+_>`~0123456789.) ") ==
          absl::string_view::npos) {
    return "";  // a construct may be starting
  }
  if (!enough && rest.empty()) return "";
  if (IsFence(start)) {
    kind_ = Kind::kFence;
    in_code_ = true;
    return kDim;
  }
  if (indent < 4 && absl::StartsWith(rest, "#")) {
    size_t level = 0;
    while (level < rest.size() && rest[level] == '#') ++level;
    if (level <= 6 && level < rest.size() && rest[level] == ' ') {
      kind_ = Kind::kHeading;
      *skip = indent + level + 1;
      return absl::StrCat(kBold, level == 1 ? "\x1b[4m" : "");
    }
  }
  if (whole && IsRule(start)) {
    kind_ = Kind::kRule;
    *skip = start.size();
    return absl::StrCat(kDim, "----------------");
  }
  if (rest.size() >= 2 &&
      (rest[0] == '-' || rest[0] == '*' || rest[0] == '+') && rest[1] == ' ' &&
      !(whole && IsRule(start))) {
    kind_ = Kind::kText;
    *skip = indent + 2;
    return absl::StrCat(std::string(indent, ' '), kBullet);
  }
  size_t digits = 0;
  while (digits < rest.size() && absl::ascii_isdigit(rest[digits])) ++digits;
  if (digits > 0 && digits + 1 < rest.size() &&
      (rest[digits] == '.' || rest[digits] == ')') && rest[digits + 1] == ' ') {
    kind_ = Kind::kText;
    *skip = indent + digits + 2;
    return absl::StrCat(std::string(indent, ' '), kBold,
                        rest.substr(0, digits + 1), kBoldOff, " ");
  }
  if (indent < 4 && absl::StartsWith(rest, ">")) {
    kind_ = Kind::kText;
    *skip = indent + 1 + (rest.size() > 1 && rest[1] == ' ');
    return absl::StrCat(kDim, "| ", kReset);
  }
  kind_ = Kind::kText;
  return "";
}

// Emits what can be emitted of the current line; `whole` when it ended.
void MarkdownRenderer::Emit(bool whole, std::string* out) {
  if (!started_) {
    size_t skip = 0;
    std::string prefix = Prefix(partial_, whole, &skip);
    if (kind_ == Kind::kUndecided) return;
    started_ = true;
    out->append(prefix);
    partial_.erase(0, skip);
  }
  if (kind_ == Kind::kCode || kind_ == Kind::kFence || kind_ == Kind::kRule) {
    out->append(partial_);  // as written, in the line's colour
    partial_.clear();
    return;
  }
  size_t used = 0;
  std::string inline_out;
  MarkdownInlineStep(partial_, whole, &inline_out, &used);
  out->append(inline_out);
  partial_.erase(0, used);
}

void MarkdownRenderer::EndLine(std::string* out) {
  Emit(/*whole=*/true, out);
  out->append(partial_);
  partial_.clear();
  if (kind_ != Kind::kText && kind_ != Kind::kUndecided) out->append(kReset);
  started_ = false;
  kind_ = Kind::kUndecided;
}

std::string MarkdownRenderer::Feed(absl::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\n') {
      EndLine(&out);
      out.push_back('\n');
    } else {
      partial_.push_back(c);
    }
  }
  Emit(/*whole=*/false, &out);
  return out;
}

std::string MarkdownRenderer::Finish() {
  std::string out;
  if (!partial_.empty() || started_) EndLine(&out);
  in_code_ = false;
  return out;
}

}  // namespace terminal
}  // namespace garuda
