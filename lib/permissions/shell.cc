#include "lib/permissions/shell.h"

#include <cctype>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace garuda {
namespace {

class Splitter {
 public:
  explicit Splitter(absl::string_view text) : text_(text) {}

  CommandSplit Run() {
    size_t i = 0;
    ReadList(&i, '\0');
    return std::move(split_);
  }

 private:
  bool Failed() const { return !split_.complete; }

  void Fail(absl::string_view reason, size_t at) {
    if (Failed()) return;
    split_.complete = false;
    split_.reason = absl::StrCat(reason, " (at character ", at + 1, ")");
  }

  char At(size_t i) const { return i < text_.size() ? text_[i] : '\0'; }

  void Flush(std::string* current) {
    absl::string_view part = absl::StripAsciiWhitespace(*current);
    if (!part.empty()) split_.parts.emplace_back(part);
    current->clear();
  }

  // Reads simple commands until `end` (')' or '`'; '\0' for the whole text)
  // and leaves *i after it.
  void ReadList(size_t* i, char end) {
    std::string current;
    while (*i < text_.size() && !Failed()) {
      size_t start = *i;
      char c = text_[*i];
      if (end != '\0' && c == end) {
        ++*i;
        Flush(&current);
        return;
      }
      switch (c) {
        case '\\':
          if (end == '`' && At(*i + 1) == '`') {
            return Fail("a nested backtick substitution", *i);
          }
          absl::StrAppend(&current, text_.substr(*i, 2));
          *i += 2;
          break;
        case '\'': {
          size_t close = text_.find('\'', *i + 1);
          if (close == absl::string_view::npos) {
            return Fail("an unclosed single quote", *i);
          }
          absl::StrAppend(&current, text_.substr(*i, close + 1 - *i));
          *i = close + 1;
          break;
        }
        case '"':
          ReadDoubleQuoted(i);
          absl::StrAppend(&current, text_.substr(start, *i - start));
          break;
        case '`':
          ++*i;
          ReadList(i, '`');
          absl::StrAppend(&current, text_.substr(start, *i - start));
          break;
        case '$':
          if (At(*i + 1) == '(') {
            if (At(*i + 2) == '(') {
              return Fail("an arithmetic expansion \"$((\"", *i);
            }
            *i += 2;
            ReadList(i, ')');
            absl::StrAppend(&current, text_.substr(start, *i - start));
          } else {
            current.push_back(c);
            ++*i;
          }
          break;
        case ';':
        case '\n':
          Flush(&current);
          ++*i;
          break;
        case '&':
          if (At(*i + 1) == '>') {
            ReadRedirection(i, *i + 2, &current);
          } else {
            Flush(&current);
            *i += At(*i + 1) == '&' ? 2 : 1;
          }
          break;
        case '|':
          Flush(&current);
          *i += (At(*i + 1) == '|' || At(*i + 1) == '&') ? 2 : 1;
          break;
        case '(':
        case ')':
          return Fail("a subshell or an unbalanced parenthesis", *i);
        case '{':
          if (absl::StripAsciiWhitespace(current).empty()) {
            return Fail("a command group \"{ ... }\"", *i);
          }
          current.push_back(c);
          ++*i;
          break;
        case '#':
          // A comment runs to the end of the line, and quotes in it do not
          // count; simpler to refuse than to read it as bash would.
          if (current.empty() ||
              absl::ascii_isspace(static_cast<unsigned char>(current.back()))) {
            return Fail("a comment", *i);
          }
          current.push_back(c);
          ++*i;
          break;
        case '<':
          return Fail(
              "an input redirection, here-document or process substitution",
              *i);
        case '>':
          ReadRedirection(i, *i + 1, &current);
          break;
        default:
          current.push_back(c);
          ++*i;
      }
    }
    if (Failed()) return;
    if (end != '\0') {
      return Fail(end == ')' ? "an unclosed \"$(\"" : "an unclosed backtick",
                  text_.size() - 1);
    }
    Flush(&current);
  }

  // From the opening '"' to after the closing one.
  void ReadDoubleQuoted(size_t* i) {
    size_t open = *i;
    ++*i;
    while (*i < text_.size() && !Failed()) {
      char c = text_[*i];
      if (c == '"') {
        ++*i;
        return;
      }
      if (c == '\\') {
        *i += 2;
      } else if (c == '`') {
        ++*i;
        ReadList(i, '`');
      } else if (c == '$' && At(*i + 1) == '(') {
        if (At(*i + 2) == '(') {
          return Fail("an arithmetic expansion \"$((\"", *i);
        }
        *i += 2;
        ReadList(i, ')');
      } else {
        ++*i;
      }
    }
    Fail("an unclosed double quote", open);
  }

  // A '>' redirection whose operator ends before `after`: only ">&N",
  // ">&-" and "/dev/null" as the target are kept in the part; any other
  // target is a file the command would write.
  void ReadRedirection(size_t* i, size_t after, std::string* current) {
    size_t j = after;
    if (At(j) == '>') ++j;  // ">>"
    if (At(j) == '&') {
      size_t k = j + 1;
      while (std::isdigit(static_cast<unsigned char>(At(k)))) ++k;
      if (At(k) == '-') ++k;
      if (k > j + 1 && (k >= text_.size() || IsWordEnd(At(k)))) {
        absl::StrAppend(current, text_.substr(*i, k - *i));
        *i = k;
        return;
      }
      return Fail("a redirection to a file", *i);
    }
    size_t k = j;
    while (At(k) == ' ' || At(k) == '\t') ++k;
    constexpr absl::string_view kNull = "/dev/null";
    if (absl::StartsWith(text_.substr(k), kNull) &&
        (k + kNull.size() >= text_.size() || IsWordEnd(At(k + kNull.size())))) {
      absl::StrAppend(current, text_.substr(*i, k + kNull.size() - *i));
      *i = k + kNull.size();
      return;
    }
    Fail("a redirection to a file", *i);
  }

  static bool IsWordEnd(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' ||
           c == '|' || c == ')' || c == '`';
  }

  absl::string_view text_;
  CommandSplit split_;
};

}  // namespace

CommandSplit SplitCommand(absl::string_view command) {
  return Splitter(command).Run();
}

}  // namespace garuda
