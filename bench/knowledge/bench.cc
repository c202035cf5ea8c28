// Index build time and query time of lib/knowledge on a 50 000-line
// repository, beside a naive whole-word search measured in the same run.
//
//   bazel run -c opt //bench/knowledge:bench [-- --lines=50000]
//
// The repository is made of copies of the two fixture projects
// (tests/data/knowledge, Java and Python), each copy under its own folder
// and Java package, written to a temporary folder; the index reads it from
// disk like a real project. Targets: build under 2 s, a query under 20 ms.
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <regex>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "lib/base/files.h"
#include "lib/knowledge/index.h"
#include "lib/knowledge/query.h"
#include "tests/knowledge/scorer.h"

ABSL_FLAG(int, lines, 50000, "size of the generated repository, in lines");
ABSL_FLAG(int, runs, 3, "index builds to time (the median is printed)");

namespace garuda::knowledge {
namespace {

using Clock = std::chrono::steady_clock;

double Ms(Clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v.empty()
             ? 0
             : v[std::min(v.size() - 1, static_cast<size_t>(p * v.size()))];
}

bool IsWord(char c) {
  return isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// The naive method: every whole-word occurrence of the name, per line.
int NaiveSearch(const std::vector<std::pair<std::string, std::string>>& files,
                const std::string& name) {
  int lines = 0;
  for (const auto& [path, text] : files) {
    size_t at = 0;
    int last_line_start = -1;
    while ((at = text.find(name, at)) != std::string::npos) {
      bool left = at == 0 || !IsWord(text[at - 1]);
      size_t end = at + name.size();
      bool right = end >= text.size() || !IsWord(text[end]);
      if (left && right) {
        int line_start = static_cast<int>(text.rfind('\n', at) + 1);
        if (line_start != last_line_start) ++lines;
        last_line_start = line_start;
      }
      at = end;
    }
  }
  return lines;
}

int Main() {
  // `bazel run` starts in the binary's runfiles folder.
  std::string data = "tests/data/knowledge";
  const char* runfiles = getenv("RUNFILES_DIR");
  if (runfiles != nullptr)
    data = JoinPath(runfiles, "garuda/tests/data/knowledge");
  struct Source {
    std::string language, path, text;
  };
  std::vector<Source> fixture;
  std::vector<OracleQuery> queries;
  for (const std::string language : {"java", "python"}) {
    auto json = ReadFileToString(JoinPath(data, language + "/oracle.json"));
    if (!json.ok()) {
      fprintf(stderr, "bench: %s\n",
              std::string(json.status().message()).c_str());
      return 1;
    }
    auto evidence = ParseEvidence(*json);
    if (!evidence.ok()) return 1;
    std::set<std::string> paths;
    for (OracleQuery& q : evidence->queries) {
      queries.push_back(q);
      queries.back().name = language;  // remembers the language
      queries.back().sites.clear();
      queries.back().sites.insert(q.name);
    }
    std::string project = JoinPath(data, language + "/project");
    std::vector<std::string> files;
    std::string listing =
        absl::StrCat("cd '", project, "' && find -L . -type f -name '*.",
                     language == "java" ? "java" : "py", "'");
    FILE* pipe = popen(listing.c_str(), "r");
    char line[4096];
    while (pipe != nullptr && fgets(line, sizeof line, pipe)) {
      std::string path(line);
      path.erase(path.find_last_not_of("\n") + 1);
      if (path.rfind("./", 0) == 0) path = path.substr(2);
      auto text = ReadFileToString(JoinPath(project, path));
      if (text.ok()) fixture.push_back({language, path, *text});
    }
    if (pipe != nullptr) pclose(pipe);
  }
  int64_t fixture_lines = 0;
  for (const Source& s : fixture) {
    fixture_lines += std::count(s.text.begin(), s.text.end(), '\n');
  }
  if (fixture_lines == 0) {
    fprintf(stderr, "bench: no fixture sources under %s\n", data.c_str());
    return 1;
  }
  int copies = static_cast<int>(
      (absl::GetFlag(FLAGS_lines) + fixture_lines - 1) / fixture_lines);
  char templ[] = "/tmp/garuda-knowledge-bench-XXXXXX";
  std::string root = mkdtemp(templ);
  std::vector<std::pair<std::string, std::string>> written;
  for (int c = 0; c < copies; ++c) {
    std::string prefix = absl::StrCat("copy", c);
    for (const Source& s : fixture) {
      std::string text = s.text;
      std::string path = s.path;
      if (s.language == "java") {
        text = absl::StrReplaceAll(
            text, {{"com.shopkit", absl::StrCat("com.shopkit", c)}});
        path = absl::StrReplaceAll(
            path, {{"com/shopkit", absl::StrCat("com/shopkit", c)}});
      }
      std::string full = JoinPath(root, JoinPath(prefix, path));
      if (!MakeDirectories(Dirname(full), 0755).ok() ||
          !WriteFileAtomically(full, text, 0644).ok()) {
        fprintf(stderr, "bench: cannot write %s\n", full.c_str());
        return 1;
      }
      written.emplace_back(JoinPath(prefix, path), text);
    }
  }
  std::vector<double> builds, cpu, parse, bind;
  std::unique_ptr<Index> index;
  for (int run = 0; run < absl::GetFlag(FLAGS_runs); ++run) {
    auto start = Clock::now();
    std::clock_t cpu_start = std::clock();
    auto built = BuildIndex(root);
    builds.push_back(Ms(Clock::now() - start));
    cpu.push_back(1000.0 * (std::clock() - cpu_start) / CLOCKS_PER_SEC);
    if (built.ok()) {
      parse.push_back((*built)->parse_ms);
      bind.push_back((*built)->bind_ms);
    }
    if (!built.ok()) return 1;
    index = *std::move(built);
  }
  IndexStats stats = index->Stats();
  // Every fixture query in every copy.
  std::vector<double> ours, naive;
  int results = 0, naive_results = 0;
  for (int c = 0; c < copies; ++c) {
    for (const OracleQuery& q : queries) {
      std::string path = q.path;
      if (q.name == "java") {
        path = absl::StrReplaceAll(
            path, {{"com/shopkit", absl::StrCat("com/shopkit", c)}});
      }
      path = JoinPath(absl::StrCat("copy", c), path);
      QueryOptions options;
      options.unknown_receivers = DefaultUnknownReceivers(path);
      options.max_results = -1;
      auto start = Clock::now();
      QueryResult result =
          FindReferences(*index, {path, q.line, q.column}, options);
      ours.push_back(Ms(Clock::now() - start));
      results += static_cast<int>(result.results.size());
      start = Clock::now();
      naive_results += NaiveSearch(written, *q.sites.begin());
      naive.push_back(Ms(Clock::now() - start));
    }
  }
  printf(
      "repository: %d files, %lld lines (%d copies of the fixtures), %d "
      "symbols, %d occurrences\n",
      stats.files, static_cast<long long>(stats.lines), copies, stats.symbols,
      stats.occurrences);
  printf(
      "index build (read, parse, resolve): median %.0f ms wall, %.0f ms CPU of "
      "%d runs "
      "(parse %.0f ms, resolve %.0f ms; target < 2000 ms)\n",
      Median(builds), Median(cpu), absl::GetFlag(FLAGS_runs), Median(parse),
      Median(bind));
  double load[3] = {0, 0, 0};
  if (getloadavg(load, 3) > 0) {
    printf("machine load average during the run: %.1f (on %ld cores)\n",
           load[0], sysconf(_SC_NPROCESSORS_ONLN));
  }
  printf(
      "find_references, %zu queries: median %.3f ms, p95 %.3f ms, max %.3f ms "
      "(target < 20 ms); %d results\n",
      ours.size(), Median(ours), Percentile(ours, 0.95),
      *std::max_element(ours.begin(), ours.end()), results);
  printf(
      "naive whole-word search, same queries, in memory: median %.3f ms, p95 "
      "%.3f ms, max %.3f ms; %d lines\n",
      Median(naive), Percentile(naive, 0.95),
      *std::max_element(naive.begin(), naive.end()), naive_results);
  std::system(absl::StrCat("rm -rf '", root, "'").c_str());
  return 0;
}

}  // namespace
}  // namespace garuda::knowledge

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return garuda::knowledge::Main();
}
