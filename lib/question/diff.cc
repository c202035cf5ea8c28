#include "lib/question/diff.h"

#include <algorithm>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "lib/base/visible.h"

namespace garuda {
namespace {

// Past this many differing lines the diff is shown as whole replacement:
// the Myers trace grows with the square of the distance.
constexpr int kMaxDistance = 4000;

std::vector<absl::string_view> SplitLines(absl::string_view text) {
  std::vector<absl::string_view> lines;
  if (text.empty()) return lines;
  lines = absl::StrSplit(text, '\n');
  if (text.back() == '\n') lines.pop_back();
  return lines;
}

enum class Op { kSame, kAdd, kRemove };

// Myers' O(ND) diff; false when the distance passes kMaxDistance.
bool Myers(const std::vector<int>& a, const std::vector<int>& b,
           std::vector<Op>* script) {
  const int n = a.size(), m = b.size();
  const int max = n + m;
  const int limit = std::min(max, kMaxDistance);
  std::vector<int> v(2 * limit + 2, 0);
  std::vector<std::vector<int>> trace;
  const int offset = limit + 1;
  int found = -1;
  for (int d = 0; d <= limit; ++d) {
    trace.push_back(v);
    for (int k = -d; k <= d; k += 2) {
      int x;
      if (k == -d || (k != d && v[offset + k - 1] < v[offset + k + 1])) {
        x = v[offset + k + 1];
      } else {
        x = v[offset + k - 1] + 1;
      }
      int y = x - k;
      while (x < n && y < m && a[x] == b[y]) {
        ++x;
        ++y;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) {
        found = d;
        break;
      }
    }
    if (found >= 0) break;
  }
  if (found < 0) return false;
  // Walk back through the trace.
  std::vector<Op> reversed;
  int x = n, y = m;
  for (int d = found; d > 0; --d) {
    const std::vector<int>& vd = trace[d];
    int k = x - y;
    int prev_k;
    if (k == -d || (k != d && vd[offset + k - 1] < vd[offset + k + 1])) {
      prev_k = k + 1;
    } else {
      prev_k = k - 1;
    }
    int prev_x = vd[offset + prev_k];
    int prev_y = prev_x - prev_k;
    while (x > prev_x && y > prev_y) {
      reversed.push_back(Op::kSame);
      --x;
      --y;
    }
    reversed.push_back(x == prev_x ? Op::kAdd : Op::kRemove);
    x = prev_x;
    y = prev_y;
  }
  while (x > 0 && y > 0) {
    reversed.push_back(Op::kSame);
    --x;
    --y;
  }
  script->assign(reversed.rbegin(), reversed.rend());
  return true;
}

}  // namespace

bool LooksBinary(absl::string_view content) {
  absl::string_view head = content.substr(0, 8000);
  if (head.find('\0') != absl::string_view::npos) return true;
  // Count bytes that are not valid UTF-8: a few in a text file are worth
  // seeing as marks; many mean a binary file.
  int marks = 0;
  MakeVisible(head, &marks);
  int controls = 0;
  for (char c : head) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) ++controls;  // marked, but text
  }
  return head.size() > 0 &&
         (marks - controls) * 10 > static_cast<int>(head.size());
}

LineDiff DiffLines(absl::string_view old_text, absl::string_view new_text,
                   int context) {
  LineDiff diff;
  std::vector<absl::string_view> a = SplitLines(old_text);
  std::vector<absl::string_view> b = SplitLines(new_text);
  // Lines as numbers, so comparisons are cheap.
  absl::flat_hash_map<absl::string_view, int> ids;
  auto number = [&](const std::vector<absl::string_view>& lines) {
    std::vector<int> out;
    out.reserve(lines.size());
    for (absl::string_view line : lines) {
      out.push_back(
          ids.emplace(line, static_cast<int>(ids.size())).first->second);
    }
    return out;
  };
  std::vector<int> na = number(a), nb = number(b);
  std::vector<Op> script;
  if (!Myers(na, nb, &script)) {
    diff.whole = true;
    script.clear();
    script.insert(script.end(), a.size(), Op::kRemove);
    script.insert(script.end(), b.size(), Op::kAdd);
  }
  // Line numbers of each op on both sides.
  struct Line {
    Op op;
    int ai, bi;
  };
  std::vector<Line> lines;
  int ai = 0, bi = 0;
  for (Op op : script) {
    lines.push_back({op, ai, bi});
    if (op != Op::kAdd) ++ai;
    if (op != Op::kRemove) ++bi;
    if (op == Op::kAdd) ++diff.added;
    if (op == Op::kRemove) ++diff.removed;
  }
  bool old_ends_newline = old_text.empty() || old_text.back() == '\n';
  bool new_ends_newline = new_text.empty() || new_text.back() == '\n';
  // Hunks: changes less than 2 * context lines apart share a hunk, with
  // `context` unchanged lines around each.
  std::vector<size_t> changed;
  for (size_t j = 0; j < lines.size(); ++j) {
    if (lines[j].op != Op::kSame) changed.push_back(j);
  }
  size_t c = 0;
  while (c < changed.size()) {
    size_t last = c;
    while (last + 1 < changed.size() &&
           changed[last + 1] - changed[last] <=
               static_cast<size_t>(2 * context) + 1) {
      ++last;
    }
    size_t start =
        changed[c] >= static_cast<size_t>(context) ? changed[c] - context : 0;
    size_t stop = std::min(lines.size(), changed[last] + context + 1);
    int old_count = 0, new_count = 0;
    for (size_t j = start; j < stop; ++j) {
      if (lines[j].op != Op::kAdd) ++old_count;
      if (lines[j].op != Op::kRemove) ++new_count;
    }
    absl::StrAppend(&diff.hunks, "@@ -", lines[start].ai + (old_count ? 1 : 0),
                    ",", old_count, " +", lines[start].bi + (new_count ? 1 : 0),
                    ",", new_count, " @@\n");
    for (size_t j = start; j < stop; ++j) {
      const Line& line = lines[j];
      absl::string_view text = line.op == Op::kAdd ? b[line.bi] : a[line.ai];
      char mark =
          line.op == Op::kSame ? ' ' : (line.op == Op::kAdd ? '+' : '-');
      absl::StrAppend(&diff.hunks, std::string(1, mark),
                      MakeLineVisible(text, &diff.hidden_marks), "\n");
      bool last_old =
          line.op != Op::kAdd && line.ai + 1 == static_cast<int>(a.size());
      bool last_new =
          line.op != Op::kRemove && line.bi + 1 == static_cast<int>(b.size());
      if ((last_old && !old_ends_newline && line.op != Op::kAdd) ||
          (last_new && !new_ends_newline && line.op == Op::kAdd)) {
        diff.hunks += "\\ No newline at end of file\n";
      }
    }
    c = last + 1;
  }
  return diff;
}

}  // namespace garuda
