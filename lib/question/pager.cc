#include "lib/question/pager.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/base/files.h"
#include "lib/base/visible.h"

namespace garuda {
namespace {

using question_internal::AnswerReader;

struct Row {
  std::string text;
  std::string line_start;  // the first bytes of its line, for the colour
};

// `text` cut into rows of at most `cols` characters (UTF-8 sequences are
// never split).
std::vector<Row> Rows(absl::string_view text, int cols) {
  std::vector<Row> rows;
  while (!text.empty()) {
    size_t end = text.find('\n');
    absl::string_view line = text.substr(0, end);
    std::string start(line.substr(0, 4));
    do {
      size_t bytes = 0;
      int characters = 0;
      while (bytes < line.size() && characters < cols) {
        ++bytes;
        while (bytes < line.size() &&
               (static_cast<unsigned char>(line[bytes]) & 0xc0) == 0x80) {
          ++bytes;
        }
        ++characters;
      }
      rows.push_back({std::string(line.substr(0, bytes)), start});
      line.remove_prefix(bytes);
    } while (!line.empty());
    if (end == absl::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return rows;
}

std::string Colored(const Row& row) {
  std::string colored = ColorDiffLine(row.line_start);
  if (colored == row.line_start) return row.text;
  // The colour of the row's line: the escape before its first bytes.
  size_t code_end = colored.find('m');
  return absl::StrCat(colored.substr(0, code_end + 1), row.text, "\x1b[0m");
}

class Pager {
 public:
  Pager(absl::string_view text, AnswerReader& reader, int out,
        const PagerOptions& options)
      : reader_(reader),
        out_(out),
        options_(options),
        rows_(Rows(text, std::max(10, options.size.cols))),
        page_(std::max(1, options.size.rows - 1)) {}

  void Run() {
    if (options_.escapes) Write("\x1b[?1049h");
    for (;;) {
      Draw();
      message_.clear();
      std::optional<int> key = reader_.ReadKey();
      if (!key || *key == 'q' || *key == 'Q') break;
      switch (*key) {
        case ' ':
        case 'f':
        case question_internal::kKeyPageDown:
          Move(page_);
          break;
        case 'b':
        case question_internal::kKeyPageUp:
          Move(-page_);
          break;
        case 'j':
        case '\n':
        case '\r':
        case question_internal::kKeyDown:
          Move(1);
          break;
        case 'k':
        case question_internal::kKeyUp:
          Move(-1);
          break;
        case 'g':
        case question_internal::kKeyHome:
          top_ = 0;
          break;
        case 'G':
        case question_internal::kKeyEnd:
          top_ = Last();
          break;
        case '/':
        case '?':
          if (!Search(*key == '/')) {
            if (reader_.interrupted()) {
              if (options_.escapes) Write("\x1b[?1049l");
              return;
            }
          }
          break;
        default:
          message_ = "that key does nothing here";
      }
    }
    if (options_.escapes) Write("\x1b[?1049l");
  }

 private:
  void Write(absl::string_view text) { (void)WriteAll(out_, text); }

  int Last() const {
    return std::max(0, static_cast<int>(rows_.size()) - page_);
  }

  void Move(int by) { top_ = std::clamp(top_ + by, 0, Last()); }

  void Draw() {
    std::string screen = options_.escapes ? "\x1b[H\x1b[2J" : "";
    const int end = std::min(static_cast<int>(rows_.size()), top_ + page_);
    for (int i = top_; i < end; ++i) {
      absl::StrAppend(&screen,
                      options_.color ? Colored(rows_[i]) : rows_[i].text, "\n");
    }
    const int total = static_cast<int>(rows_.size());
    std::string status = absl::StrCat(
        "-- lines ", total == 0 ? 0 : top_ + 1, "-", end, " of ", total,
        end >= total ? " (END)" : absl::StrCat(" (", end * 100 / total, "%)"),
        message_.empty() ? "" : absl::StrCat(": ", message_), " -- ",
        kPagerKeysLine);
    if (options_.escapes) {
      absl::StrAppend(&screen, "\x1b[7m", status, "\x1b[0m");
    } else {
      absl::StrAppend(&screen, status, "\n");
    }
    Write(screen);
  }

  // Reads the text after / or ? and moves to the next (or previous) row
  // that holds it; false when nothing was read.
  bool Search(bool forward) {
    if (options_.escapes) Write("\r\x1b[K");
    Write(forward ? "/" : "?");
    std::optional<std::string> text = reader_.ReadText(out_);
    if (!options_.escapes) Write("\n");
    if (!text) return false;
    if (!text->empty()) last_search_ = *text;
    if (last_search_.empty()) {
      message_ = "nothing to search for";
      return true;
    }
    const int total = static_cast<int>(rows_.size());
    for (int i = forward ? top_ + 1 : top_ - 1; i >= 0 && i < total;
         i += forward ? 1 : -1) {
      if (absl::StrContains(rows_[i].text, last_search_)) {
        top_ = i;
        message_ =
            absl::StrCat("found \"", MakeTextVisible(last_search_), "\"");
        return true;
      }
    }
    message_ = absl::StrCat("\"", MakeTextVisible(last_search_),
                            "\" not found ", forward ? "below" : "above");
    return true;
  }

  AnswerReader& reader_;
  int out_;
  PagerOptions options_;
  std::vector<Row> rows_;
  int page_;
  int top_ = 0;
  std::string message_;
  std::string last_search_;
};

}  // namespace

void Page(absl::string_view text, AnswerReader& reader, int out,
          const PagerOptions& options) {
  Pager(text, reader, out, options).Run();
}

}  // namespace garuda
