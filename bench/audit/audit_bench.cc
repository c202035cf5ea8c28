// The audit log's speed figures beside their references, measured in one
// run (bench/audit/run.sh builds and runs it):
//   - append rate with grouped fsync and with fsync per line, through the
//     writer library (one event per call, as the channel delivers them) and
//     through `garuda-auditor append` (JSON lines on standard input);
//   - verify throughput of `garuda-audit verify` on a log of at least 100 MB
//     beside `sha256sum` of the same file.
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "lib/audit/line_format.h"
#include "lib/audit/paths.h"
#include "lib/audit/writer.h"
#include "lib/base/files.h"
#include "lib/ipc/helper_process.h"
#include "proto/audit_log.pb.h"
#include "proto/auditor_service.pb.h"

ABSL_FLAG(std::string, dir, "", "A scratch folder on the disk to measure.");
ABSL_FLAG(std::string, auditor, "", "Path of garuda-auditor.");
ABSL_FLAG(std::string, audit, "", "Path of garuda-audit.");
ABSL_FLAG(int, grouped_lines, 200000, "Lines for the grouped-fsync runs.");
ABSL_FLAG(int, per_line_lines, 2000, "Lines for the fsync-per-line runs.");
ABSL_FLAG(int, verify_mb, 128, "Size of the verify log in MB (>= 100).");
ABSL_FLAG(int, repeat, 3, "Runs of verify and sha256sum; the best counts.");

namespace garuda {
namespace {

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "audit_bench: %s\n", what.c_str());
  std::exit(1);
}

audit::AuditEvent BenchEvent(int i) {
  audit::AuditEvent event;
  event.set_kind("command");
  event.set_tool("bash");
  event.set_target(absl::StrCat("npm run build -- --filter=package-", i % 97));
  event.set_decision("allow");
  event.set_reason("rule: Bash(npm run build:*) in ~/.garuda/settings.json");
  return event;
}

std::string BenchEventJson(int i) {
  std::string out;
  AppendCanonicalEvent(BenchEvent(i), &out);
  return out + "\n";
}

double AppendThroughWriter(const std::string& dir, int lines,
                           uint32_t fsync_max_lines) {
  WriterOptions options;
  options.audit_root = JoinPath(dir, "lib-home/.garuda/audit");
  options.project = dir;
  options.config.fsync_max_lines = fsync_max_lines;
  options.config.fsync_max_ms = 100;
  absl::StatusOr<std::unique_ptr<AuditWriter>> writer =
      AuditWriter::Open(options);
  if (!writer.ok()) Die(std::string(writer.status().message()));
  (*writer)->StartTimedSync();
  std::vector<audit::AuditEvent> events;
  for (int i = 0; i < 97; ++i) events.push_back(BenchEvent(i));
  absl::Time start = absl::Now();
  for (int i = 0; i < lines; ++i) {
    absl::StatusOr<AppendResult> result =
        (*writer)->Append({events[i % events.size()]}, false);
    if (!result.ok()) Die(std::string(result.status().message()));
  }
  absl::StatusOr<AppendResult> closed = (*writer)->Close();
  if (!closed.ok()) Die(std::string(closed.status().message()));
  double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  return lines / seconds;
}

// Runs a shell command; returns its wall time in seconds.
double Timed(const std::string& command) {
  absl::Time start = absl::Now();
  int status = std::system(command.c_str());
  double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    Die(absl::StrCat("failed: ", command));
  }
  return seconds;
}

// Runs `command` (through sh, which execs it) and returns the peak resident
// memory of the process, in KiB, from wait4.
long PeakKib(const std::string& command) {
  pid_t pid = ::fork();
  if (pid < 0) Die("fork");
  if (pid == 0) {
    std::string exec = "exec env " + command;  // command: VAR=... program
    ::execl("/bin/sh", "sh", "-c", exec.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  struct rusage usage = {};
  if (::wait4(pid, &status, 0, &usage) != pid || !WIFEXITED(status) ||
      WEXITSTATUS(status) != 0) {
    Die(absl::StrCat("failed: ", command));
  }
  return usage.ru_maxrss;
}

double AppendThroughProgram(const std::string& dir, const std::string& auditor,
                            int lines, uint32_t fsync_max_lines) {
  std::string home =
      JoinPath(dir, absl::StrCat("program-home-", fsync_max_lines));
  if (!MakeDirectories(JoinPath(home, ".garuda"), 0700).ok())
    Die("mkdir " + home);
  std::ofstream(JoinPath(home, ".garuda/policy.json"))
      << "{\"audit\": {\"fsyncMaxLines\": " << fsync_max_lines
      << ", \"fsyncMaxMs\": 100}}\n";
  std::string input = JoinPath(dir, "events.jsonl");
  {
    std::ofstream out(input, std::ios::trunc);
    for (int i = 0; i < lines; ++i) out << BenchEventJson(i);
  }
  return lines / Timed(absl::StrCat(
                     "HOME=", home, " GARUDA_MANAGED_POLICY_DIR=", dir,
                     "/no-managed-policy ", auditor, " append --project ", dir,
                     " < ", input, " > /dev/null"));
}

// Requests of `per_request` events each over the channel of a real
// `garuda-auditor serve`, one round trip at a time.
double AppendThroughChannel(const std::string& dir, const std::string& auditor,
                            int lines, int per_request) {
  std::string home = JoinPath(dir, absl::StrCat("channel-home-", per_request));
  if (!MakeDirectories(home, 0700).ok()) Die("mkdir " + home);
  setenv("HOME", home.c_str(), 1);
  setenv("GARUDA_MANAGED_POLICY_DIR",
         JoinPath(dir, "no-managed-policy").c_str(), 1);
  ipc::HelperOptions options;
  options.argv = {auditor, "serve", "--channel-fd=3", "--project", dir};
  absl::StatusOr<std::unique_ptr<ipc::HelperProcess>> helper =
      ipc::HelperProcess::Spawn(options);
  if (!helper.ok()) Die(std::string(helper.status().message()));
  audit::AuditRequest request;
  for (int i = 0; i < per_request; ++i) {
    *request.mutable_append()->add_events() = BenchEvent(i);
  }
  audit::AuditReply reply;
  uint64_t seq = 0;
  absl::Time start = absl::Now();
  for (int sent = 0; sent < lines; sent += per_request) {
    request.set_seq(++seq);
    absl::Status status = (*helper)->Call(request, &reply);
    if (!status.ok() || reply.has_error())
      Die("append over the channel failed");
  }
  audit::AuditRequest close;
  close.set_seq(++seq);
  close.mutable_close();
  if (!(*helper)->Call(close, &reply).ok() || !(*helper)->Stop().ok()) {
    Die("close over the channel failed");
  }
  return lines / absl::ToDoubleSeconds(absl::Now() - start);
}

}  // namespace
}  // namespace garuda

int main(int argc, char** argv) {
  using namespace garuda;
  absl::SetProgramUsageMessage(
      "measures append and verify of the audit log; see bench/audit/run.sh");
  absl::ParseCommandLine(argc, argv);
  const std::string dir = absl::GetFlag(FLAGS_dir);
  const std::string auditor = absl::GetFlag(FLAGS_auditor);
  const std::string audit = absl::GetFlag(FLAGS_audit);
  if (dir.empty() || auditor.empty() || audit.empty()) {
    Die("--dir, --auditor and --audit are required");
  }
  const int grouped = absl::GetFlag(FLAGS_grouped_lines);
  const int per_line = absl::GetFlag(FLAGS_per_line_lines);

  std::string load = "?";
  absl::StatusOr<std::string> load_text = ReadFileToString("/proc/loadavg");
  if (load_text.ok()) load = load_text->substr(0, load_text->find(' '));
  // Other work on the machine slows every figure: say how much there was.
  std::printf("load average at start: %s on %ld cores\n\n", load.c_str(),
              sysconf(_SC_NPROCESSORS_ONLN));
  std::printf(
      "append (lines per second)              grouped fsync   fsync per "
      "line\n");
  double lib_grouped = AppendThroughWriter(dir, grouped, 1000);
  double lib_per_line = AppendThroughWriter(dir, per_line, 1);
  std::printf("  writer library, 1 event per call     %13.0f   %14.0f\n",
              lib_grouped, lib_per_line);
  std::fflush(stdout);
  double program_grouped = AppendThroughProgram(dir, auditor, grouped, 1000);
  double program_per_line = AppendThroughProgram(dir, auditor, per_line, 1);
  std::printf("  garuda-auditor append (JSON stdin)   %13.0f   %14.0f\n",
              program_grouped, program_per_line);
  std::fflush(stdout);
  double channel_one = AppendThroughChannel(dir, auditor, grouped / 4, 1);
  double channel_batch = AppendThroughChannel(dir, auditor, grouped, 100);
  std::printf("  garuda-auditor serve, 1 event/request  %12.0f\n", channel_one);
  std::printf("  garuda-auditor serve, 100 per request  %12.0f\n",
              channel_batch);
  std::printf(
      "  (grouped: at most 1000 lines or 100 ms per fsync; target >= 50000 "
      "grouped)\n\n");
  std::fflush(stdout);

  // A log of verify_mb MB in a project's audit folder, written directly.
  std::string home = JoinPath(dir, "verify-home");
  std::string project = JoinPath(dir, "verify-project");
  if (!MakeDirectories(project, 0755).ok()) Die("mkdir " + project);
  absl::StatusOr<std::string> folder = ProjectAuditFolderName(project);
  if (!folder.ok()) Die(std::string(folder.status().message()));
  std::string audit_folder = JoinPath(JoinPath(home, ".garuda/audit"), *folder);
  if (!MakeDirectories(audit_folder, 0700).ok()) Die("mkdir " + audit_folder);
  std::string log_path = JoinPath(audit_folder, "bench.jsonl");
  const size_t target = static_cast<size_t>(absl::GetFlag(FLAGS_verify_mb))
                        << 20;
  {
    std::ofstream out(log_path, std::ios::binary | std::ios::trunc);
    std::string prev = GenesisHash("bench"), chunk;
    size_t written = 0;
    absl::Time time = absl::Now();
    for (uint64_t seq = 1; written < target; ++seq) {
      prev = AppendAuditLine(seq, time, prev, BenchEvent(static_cast<int>(seq)),
                             &chunk);
      if (chunk.size() > (1 << 20)) {
        out << chunk;
        written += chunk.size();
        chunk.clear();
      }
    }
    out << chunk;
  }
  struct stat st;
  if (::stat(log_path.c_str(), &st) != 0) Die("stat " + log_path);
  const double mb = st.st_size / 1e6;
  // Warm the page cache once so that both readers see the same state.
  Timed(absl::StrCat("cat ", log_path, " > /dev/null"));
  double best_verify = 1e9, best_sha = 1e9;
  for (int i = 0; i < absl::GetFlag(FLAGS_repeat); ++i) {
    best_sha = std::min(
        best_sha, Timed(absl::StrCat("sha256sum ", log_path, " > /dev/null")));
    best_verify = std::min(
        best_verify,
        Timed(absl::StrCat("HOME=", home, " ", audit, " verify --project ",
                           project, " > /dev/null")));
  }
  std::printf("verify (%.1f MB log, best of %d, page cache warm)\n", mb,
              absl::GetFlag(FLAGS_repeat));
  std::printf("  garuda-audit verify   %8.1f MB/s\n", mb / best_verify);
  std::printf("  sha256sum             %8.1f MB/s\n", mb / best_sha);
  std::printf("  ratio                 %8.2f  (target >= 1.27, the mapped "
              "reader's lowest)\n",
              best_sha / best_verify);
  const std::string verify_command =
      absl::StrCat("HOME=", home, " ", audit, " verify --project ", project,
                   " > /dev/null");
  std::printf("  peak memory           %8.1f MiB  (verify; log %.1f MB: "
              "bounded, a few MiB)\n",
              PeakKib(verify_command) / 1024.0, mb);
  return 0;
}
