// The per-command overhead of `true` as garuda-agent sees it: one
// `garuda-stager serve` per mode on a socketpair (HelperProcess, as
// //tests/staging:serve_test drives it), each living across commands. For
// every backend named, a staged stager; beside them one direct stager on the
// same project. Each iteration times RunCommand `true` on the direct stager
// and then on each staged one (interleaved, so that all see the same load);
// the overhead is the median over the iterations of staged minus direct.
// With GARUDA_STAGER_TIMINGS=1 in the environment the stagers print their
// phases on stderr, which this program captures and sums (refresh + list).
//
//   serve_bench --stager PATH --project DIR [--backends "copy overlay"]
//               [--iterations N] [--warmup N] [--before PATH]
//
// A backend "copy-walk" is the copy backend with GARUDA_STAGER_WALK=1 (it
// walks both trees at every command instead of asking its watches);
// --before PATH adds the copy backend of another garuda-stager binary (the
// one before a change), each interleaved with the others.
//
// The first commands of a staged stager are not timed (--warmup, default
// 3): the first has a fresh view, and the copy backend's watches of the two
// trees are in place only after one walk of each.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "lib/base/unique_fd.h"
#include "lib/ipc/helper_process.h"
#include "proto/stager_service.pb.h"

namespace garuda {
namespace {

struct Options {
  std::string stager;
  std::string project;
  std::vector<std::string> backends = {"copy", "overlay"};
  int iterations = 30;
  int warmup = 3;
  std::string before;  // another garuda-stager, its copy backend measured
};

constexpr char kUsage[] =
    "usage: serve_bench --stager PATH --project DIR [--backends \"copy "
    "overlay copy-walk\"] [--iterations N] [--warmup N] [--before PATH]\n"
    "Times RunCommand `true` on garuda-stager serve, staged (per backend) "
    "minus direct, interleaved.\n";

bool ParseOptions(int argc, char** argv, Options* options) {
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (flag == "--help") return false;
    if (i + 1 >= argc) return false;
    std::string value = argv[++i];
    if (flag == "--stager") {
      options->stager = value;
    } else if (flag == "--project") {
      options->project = value;
    } else if (flag == "--backends") {
      options->backends = absl::StrSplit(value, ' ', absl::SkipEmpty());
    } else if (flag == "--iterations") {
      if (!absl::SimpleAtoi(value, &options->iterations)) return false;
    } else if (flag == "--before") {
      options->before = value;
    } else if (flag == "--warmup") {
      if (!absl::SimpleAtoi(value, &options->warmup)) return false;
    } else {
      return false;
    }
  }
  return !options->stager.empty() && !options->project.empty() &&
         options->iterations > 0;
}

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[(values.size() - 1) / 2];
}

// A stager with its stderr in a memfd (the timings lines).
struct Stager {
  std::string label;
  std::unique_ptr<ipc::HelperProcess> process;
  UniqueFd stderr_file;
  uint64_t seq = 0;
  std::vector<double> times_ms;
};

// `backend` "copy-walk": copy with GARUDA_STAGER_WALK=1; "copy-before":
// copy of the --before binary.
bool Start(const Options& options, const std::string& mode,
           const std::string& backend, Stager* stager) {
  stager->label = backend.empty() ? mode : absl::StrCat(mode, " ", backend);
  stager->stderr_file =
      UniqueFd(::memfd_create("serve-bench-stderr", MFD_CLOEXEC));
  std::string program =
      backend == "copy-before" ? options.before : options.stager;
  std::string kind = backend;
  if (backend == "copy-walk" || backend == "copy-before") kind = "copy";
  ipc::HelperOptions helper;
  helper.argv = {program,     "serve",         "--channel-fd=3",
                 "--project", options.project, "--mode",
                 mode,        "--quiet"};
  if (!kind.empty()) {
    helper.argv.push_back("--backend");
    helper.argv.push_back(kind);
  }
  if (backend == "copy-walk") {
    ::setenv("GARUDA_STAGER_WALK", "1", 1);
  } else {
    ::unsetenv("GARUDA_STAGER_WALK");
  }
  std::fflush(stderr);
  UniqueFd saved(::fcntl(2, F_DUPFD_CLOEXEC, 3));
  ::dup2(stager->stderr_file.get(), 2);
  absl::StatusOr<std::unique_ptr<ipc::HelperProcess>> spawned =
      ipc::HelperProcess::Spawn(helper);
  ::dup2(saved.get(), 2);
  ::unsetenv("GARUDA_STAGER_WALK");
  if (!spawned.ok()) {
    std::fprintf(stderr, "serve_bench: %s: %s\n", stager->label.c_str(),
                 std::string(spawned.status().message()).c_str());
    return false;
  }
  stager->process = *std::move(spawned);
  return true;
}

// RunCommand `true`; its wall time in ms, or a negative number on error.
double RunTrue(Stager* stager) {
  stager::StagerRequest request;
  request.set_seq(++stager->seq);
  request.mutable_run()->set_command("true");
  stager::StagerReply reply;
  std::vector<UniqueFd> fds;
  absl::Time start = absl::Now();
  absl::Status called = stager->process->Call(request, &reply, &fds);
  double ms = absl::ToDoubleMilliseconds(absl::Now() - start);
  if (!called.ok() || !reply.has_result() || reply.result().exit_code() != 0 ||
      reply.result().has_change_set()) {
    std::fprintf(stderr, "serve_bench: %s: true failed: %s %s\n",
                 stager->label.c_str(), std::string(called.message()).c_str(),
                 reply.ShortDebugString().c_str());
    return -1;
  }
  return ms;
}

// The phase `name` of every "timings:" line the stager printed, after the
// first `skip` lines.
std::vector<double> Phases(const Stager& stager, const std::string& name,
                           size_t skip) {
  std::vector<double> values;
  struct stat st;
  if (::fstat(stager.stderr_file.get(), &st) != 0) return values;
  std::string text(static_cast<size_t>(st.st_size), '\0');
  ssize_t got = ::pread(stager.stderr_file.get(), text.data(), text.size(), 0);
  if (got < 0) return values;
  text.resize(static_cast<size_t>(got));
  size_t line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (line.find("timings: ") == absl::string_view::npos) continue;
    if (line_number++ < skip) continue;
    std::string key = absl::StrCat(" ", name, "=");
    size_t at = line.find(key);
    if (at == absl::string_view::npos) continue;
    absl::string_view rest = line.substr(at + key.size());
    rest = rest.substr(0, rest.find("ms"));
    double value = 0;
    if (absl::SimpleAtod(rest, &value)) values.push_back(value);
  }
  return values;
}

void Line(const std::string& what, double ms) {
  std::printf("  %-58s %10.1f ms\n", what.c_str(), ms);
}

int Main(int argc, char** argv) {
  Options options;
  if (!ParseOptions(argc, argv, &options)) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  if (!options.before.empty()) options.backends.push_back("copy-before");
  Stager direct;
  if (!Start(options, "direct", "", &direct)) return 1;
  std::vector<Stager> staged(options.backends.size());
  for (size_t b = 0; b < staged.size(); ++b) {
    absl::Time start = absl::Now();
    if (!Start(options, "staged", options.backends[b], &staged[b])) return 1;
    // The view is made at the stager's start; the first reply waits for it.
    if (RunTrue(&staged[b]) < 0) return 1;
    Line(absl::StrCat("serve ", options.backends[b],
                      ": start and the first true (the view made)"),
         absl::ToDoubleMilliseconds(absl::Now() - start));
  }
  for (int i = 0; i < options.warmup; ++i) {
    if (RunTrue(&direct) < 0) return 1;
    for (Stager& stager : staged) {
      if (RunTrue(&stager) < 0) return 1;
    }
  }
  std::vector<std::vector<double>> overheads(staged.size());
  for (int i = 0; i < options.iterations; ++i) {
    double d = RunTrue(&direct);
    if (d < 0) return 1;
    direct.times_ms.push_back(d);
    for (size_t b = 0; b < staged.size(); ++b) {
      double s = RunTrue(&staged[b]);
      if (s < 0) return 1;
      staged[b].times_ms.push_back(s);
      overheads[b].push_back(s - d);
    }
  }
  Line(absl::StrFormat("serve direct, RunCommand true (%d interleaved)",
                       options.iterations),
       Median(direct.times_ms));
  for (size_t b = 0; b < staged.size(); ++b) {
    const std::string& backend = options.backends[b];
    Line(absl::StrCat("serve staged ", backend, ", RunCommand true"),
         Median(staged[b].times_ms));
    double overhead = Median(overheads[b]);
    Line(absl::StrCat("serve ", backend,
                      ": per-command overhead (staged minus direct)"),
         overhead);
    // Issue 32's goals, beside the figure of this run.
    double goal = backend == "overlay" ? 2 : (backend == "copy" ? 5 : 0);
    if (goal > 0) {
      std::printf(
          "  %-58s %10s    (goal: at most %.0f ms; %s)\n",
          absl::StrCat("  ", backend, " overhead against its goal").c_str(),
          absl::StrFormat("%.2fx", overhead / goal).c_str(), goal,
          overhead <= goal ? "met" : "not met");
    }
    size_t skip = 1 + static_cast<size_t>(options.warmup);
    std::vector<double> refresh = Phases(staged[b], "refresh", skip);
    std::vector<double> list = Phases(staged[b], "list", skip);
    if (!refresh.empty() && refresh.size() == list.size()) {
      std::vector<double> sum;
      for (size_t i = 0; i < refresh.size(); ++i) {
        sum.push_back(refresh[i] + list[i]);
      }
      Line("  of which refresh (stager timings)", Median(refresh));
      Line("  of which list (stager timings)", Median(list));
      Line("  of which refresh + list", Median(sum));
      std::vector<double> command = Phases(staged[b], "command", skip);
      Line("  the command in the sandbox (stager timings)", Median(command));
    }
  }
  for (Stager& stager : staged) {
    stager::StagerRequest end;
    end.set_seq(++stager.seq);
    end.mutable_end();
    stager::StagerReply reply;
    stager.process->Call(end, &reply).IgnoreError();
    stager.process->Stop().IgnoreError();
  }
  direct.process->Stop().IgnoreError();
  double load[3];
  if (::getloadavg(load, 3) == 3) {
    std::printf("  load average at the end: %.2f %.2f %.2f\n", load[0], load[1],
                load[2]);
  }
  return 0;
}

}  // namespace
}  // namespace garuda

int main(int argc, char** argv) { return garuda::Main(argc, argv); }
