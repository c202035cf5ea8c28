// The audit log's speed figures beside their references, measured in one
// run (bench/audit/run.sh builds and runs it):
//   - append rate with grouped fsync and with fsync per line, through the
//     writer library (one event per call, as the channel delivers them) and
//     through `garuda-auditor append` (JSON lines on standard input);
//   - verify throughput of `garuda-audit verify` on a log of at least 100 MB
//     beside `sha256sum` of the same file;
//   - the Merkle tree (docs/audit.md, "The tree"): append with the tree and
//     signed checkpoints beside append without; inclusion and consistency
//     proofs on a 1,000,000-leaf tree beside recomputing the root from the
//     leaves; verify of a log and its tree beside sha256sum; the witness's
//     requests per second over HTTP beside the same requests in process.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "lib/audit/line_format.h"
#include "lib/audit/paths.h"
#include "lib/audit/tree_store.h"
#include "lib/audit/witness_server.h"
#include "lib/audit/writer.h"
#include "lib/base/files.h"
#include "lib/crypto/merkle.h"
#include "lib/crypto/note.h"
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
ABSL_FLAG(int, tree_leaves, 1000000, "Leaves of the tree the proofs use.");
ABSL_FLAG(int, witness_requests, 2000, "Requests in the witness runs.");
ABSL_FLAG(int, tree_rounds, 5,
          "Alternating rounds of append without and with the tree.");
ABSL_FLAG(bool, tree_append_only, false,
          "Measure only append without and with the tree.");
ABSL_FLAG(std::string, append_case, "",
          "Run only this append once (plain1, tree1, plain97, tree97) and "
          "print its rate: for valgrind --tool=callgrind, whose instruction "
          "counts do not depend on the machine's load.");
ABSL_FLAG(int, fsync_max_ms, 100,
          "fsyncMaxMs of the append runs: how often a steady stream signs.");

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

// With `signer`: the project's tree and a signed checkpoint per group.
double AppendThroughWriter(const std::string& dir, int lines,
                           uint32_t fsync_max_lines,
                           std::shared_ptr<const NoteSigner> signer = nullptr,
                           int per_call = 1,
                           const std::string& home = "lib-home",
                           bool checkpoint = false) {
  WriterOptions options;
  options.audit_root = JoinPath(dir, home + "/.garuda/audit");
  options.project = dir;
  options.config.fsync_max_lines = fsync_max_lines;
  options.config.fsync_max_ms =
      static_cast<uint32_t>(absl::GetFlag(FLAGS_fsync_max_ms));
  options.config.checkpoint = checkpoint || signer != nullptr;
  options.signer = signer;
  absl::StatusOr<std::unique_ptr<AuditWriter>> writer =
      AuditWriter::Open(options);
  if (!writer.ok()) Die(std::string(writer.status().message()));
  (*writer)->StartTimedSync();
  std::vector<audit::AuditEvent> events;
  for (int i = 0; i < 97; ++i) events.push_back(BenchEvent(i));
  std::vector<audit::AuditEvent> batch(events.begin(),
                                       events.begin() + per_call);
  absl::Time start = absl::Now();
  for (int i = 0; i < lines; i += per_call) {
    absl::StatusOr<AppendResult> result =
        per_call == 1 ? (*writer)->Append({events[i % events.size()]}, false)
                      : (*writer)->Append(batch, false);
    if (!result.ok()) Die(std::string(result.status().message()));
  }
  absl::StatusOr<AppendResult> closed = (*writer)->Close();
  if (!closed.ok()) Die(std::string(closed.status().message()));
  double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  return lines / seconds;
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

double Best(const std::vector<double>& values) {
  return *std::max_element(values.begin(), values.end());
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

// Proofs on a tree of `leaves` leaves, built by TreeAppender (the log
// lines themselves are not needed to prove).
void MeasureProofs(const std::string& dir, int leaves) {
  std::string folder = JoinPath(dir, "proof-project");
  if (!MakeDirectories(folder, 0700).ok()) Die("mkdir " + folder);
  absl::StatusOr<std::unique_ptr<TreeAppender>> tree =
      TreeAppender::Open(folder, "bench");
  if (!tree.ok()) Die(std::string(tree.status().message()));
  absl::Time built = absl::Now();
  {
    absl::StatusOr<TreeAppender::Lock> lock = (*tree)->LockAndCatchUp();
    if (!lock.ok()) Die("lock");
    std::string lines;
    uint64_t offset = 0;
    for (int i = 0; i < leaves; ++i) {
      absl::StrAppend(&lines, BenchEventJson(i).substr(0, 60), i, "\n");
      if (lines.size() > (1 << 20) || i + 1 == leaves) {
        if (!(*tree)->AppendLines(lines, offset).ok()) Die("append");
        offset += lines.size();
        lines.clear();
      }
    }
  }
  if (!(*tree)->Sync().ok()) Die("sync");
  double build_seconds = absl::ToDoubleSeconds(absl::Now() - built);
  absl::StatusOr<TreeReader> reader = TreeReader::Open((*tree)->folder());
  if (!reader.ok()) Die("open tree");
  const uint64_t size = reader->size();
  // Cold files are not what is measured: read them once.
  Timed(absl::StrCat("cat ", (*tree)->folder(), "/entries > /dev/null"));
  const int kProofs = 1000;
  absl::Time start = absl::Now();
  size_t hashes = 0;
  for (int i = 0; i < kProofs; ++i) {
    uint64_t index = (static_cast<uint64_t>(i) * 7919 * 104729) % size;
    absl::StatusOr<std::vector<MerkleHash>> proof =
        InclusionProof(index, size, reader->Hashes());
    if (!proof.ok()) Die(std::string(proof.status().message()));
    hashes += proof->size();
  }
  double inclusion_us =
      absl::ToDoubleMicroseconds(absl::Now() - start) / kProofs;
  start = absl::Now();
  for (int i = 0; i < kProofs; ++i) {
    uint64_t old = 1 + (static_cast<uint64_t>(i) * 7919 * 104729) % (size - 1);
    absl::StatusOr<std::vector<MerkleHash>> proof =
        ConsistencyProof(old, size, reader->Hashes());
    if (!proof.ok()) Die(std::string(proof.status().message()));
    hashes += proof->size();
  }
  double consistency_us =
      absl::ToDoubleMicroseconds(absl::Now() - start) / kProofs;
  // The reference: what a proof costs without stored hashes, the root
  // recomputed from the leaf hashes (the leaves' own hashing left out).
  std::vector<MerkleHash> leaf_hashes;
  leaf_hashes.reserve(size);
  for (uint64_t i = 0; i < size; ++i) {
    leaf_hashes.push_back(*reader->Hashes()(0, i));
  }
  start = absl::Now();
  MerkleEdge edge;
  for (const MerkleHash& hash : leaf_hashes) edge.Append(hash, nullptr);
  MerkleHash root = edge.Root();
  double recompute_ms = absl::ToDoubleMilliseconds(absl::Now() - start);
  if (root != *TreeRoot(size, reader->Hashes())) Die("roots differ");
  std::printf(
      "proofs on a tree of %llu leaves (built in %.1f s; %zu hashes "
      "read)\n",
      static_cast<unsigned long long>(size), build_seconds, hashes);
  std::printf("  inclusion proof        %8.1f us  (target < 1000)\n",
              inclusion_us);
  std::printf("  consistency proof      %8.1f us\n", consistency_us);
  std::printf(
      "  root from leaf hashes  %8.1f ms  (the reference: no stored "
      "hashes)\n\n",
      recompute_ms);
  std::fflush(stdout);
}

// A witness on loopback answering `requests` consecutive checkpoints of one
// log over one kept-alive connection, beside the same requests in process.
void MeasureWitness(const std::string& dir, int requests) {
  std::shared_ptr<const NoteSigner> log = std::make_shared<const NoteSigner>(
      *GenerateNoteSigner("bench.example/log"));
  std::shared_ptr<const NoteSigner> key = std::make_shared<const NoteSigner>(
      *GenerateNoteSigner("bench.example/w"));
  MemoryMerkleTree tree;
  for (int i = 0; i <= 2 * requests + 1; ++i) tree.AppendLeaf(absl::StrCat(i));
  // Bodies for sizes 1, 2, ... from the previous size, for two origins.
  const auto bodies = [&](const std::string& origin, int first, int count) {
    std::vector<std::string> out;
    for (int i = 0; i < count; ++i) {
      uint64_t old = first + i - 1, size = first + i;
      std::string body = absl::StrCat("old ", old, "\n");
      std::vector<MerkleHash> proof =
          *ConsistencyProof(old, size, tree.Reader());
      for (const MerkleHash& hash : proof) {
        absl::StrAppend(&body, Base64Encode(HashBytes(hash)), "\n");
      }
      Checkpoint checkpoint{origin, size, *TreeRoot(size, tree.Reader()), {}};
      absl::StrAppend(&body, "\n",
                      *SignNote(FormatCheckpoint(checkpoint), *log));
      out.push_back(body);
    }
    return out;
  };
  std::string state = JoinPath(dir, "witness-state");
  if (!MakeDirectories(state, 0700).ok()) Die("mkdir " + state);
  Witness witness(key, {VerifierOf(*log, kNoteEd25519)}, state,
                  [] { return static_cast<uint64_t>(::time(nullptr)); });
  std::vector<std::string> direct =
      bodies("bench.example/log/direct", 1, requests);
  absl::Time start = absl::Now();
  for (const std::string& body : direct) {
    if (witness.AddCheckpoint(body).status != 200) Die("witness refused");
  }
  double direct_rate = requests / absl::ToDoubleSeconds(absl::Now() - start);

  int port = 0;
  absl::StatusOr<UniqueFd> listener = ListenOn("127.0.0.1:0", &port);
  if (!listener.ok()) Die(std::string(listener.status().message()));
  std::atomic<bool> stop{false};
  std::thread server([&] {
    ServeWitnessHttp(listener->get(), witness, HttpLimits(), 8, &stop);
  });
  std::vector<std::string> http = bodies("bench.example/log/http", 1, requests);
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address = {};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) !=
      0) {
    Die("connect");
  }
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  start = absl::Now();
  std::string pending;
  for (const std::string& body : http) {
    std::string request = absl::StrCat(
        "POST /add-checkpoint HTTP/1.1\r\nHost: bench\r\nContent-Length: ",
        body.size(), "\r\n\r\n", body);
    if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) !=
        static_cast<ssize_t>(request.size())) {
      Die("send");
    }
    // One answer: its head and the Content-Length bytes after it.
    for (;;) {
      size_t head = pending.find("\r\n\r\n");
      if (head != std::string::npos) {
        size_t at = pending.find("Content-Length: ");
        size_t length = std::stoul(pending.substr(at + 16));
        if (pending.size() >= head + 4 + length) {
          if (pending.compare(0, 12, "HTTP/1.1 200") != 0)
            Die("refused: " + pending);
          pending.erase(0, head + 4 + length);
          break;
        }
      }
      char buffer[4096];
      ssize_t got = ::recv(fd, buffer, sizeof(buffer), 0);
      if (got <= 0) Die("recv");
      pending.append(buffer, got);
    }
  }
  double http_rate = requests / absl::ToDoubleSeconds(absl::Now() - start);
  ::close(fd);
  stop.store(true);
  server.join();
  std::printf(
      "witness, %d consecutive checkpoints of one log (each saved "
      "with fsync before its answer)\n",
      requests);
  std::printf("  over HTTP, one connection  %8.0f requests/s\n", http_rate);
  std::printf("  in process (reference)     %8.0f requests/s\n\n", direct_rate);
  std::fflush(stdout);
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
  // The tree and a signed checkpoint per group, beside the same appends
  // without, alternating so that the machine's load falls on both. Medians
  // (of the rates, and of each round's ratio) and the best are printed: on
  // a shared machine one run says little.
  std::shared_ptr<const NoteSigner> signer =
      std::make_shared<const NoteSigner>(*GenerateNoteSigner("bench.example"));
  if (const std::string only = absl::GetFlag(FLAGS_append_case);
      !only.empty()) {
    const bool with_tree = absl::StartsWith(only, "tree");
    const int per_call = absl::EndsWith(only, "97") ? 97 : 1;
    if (!absl::EndsWith(only, "1") && per_call == 1)
      Die("unknown --append_case");
    std::printf(
        "%s: %.0f lines/s\n", only.c_str(),
        AppendThroughWriter(dir, grouped, 1000, with_tree ? signer : nullptr,
                            per_call, only, !with_tree));
    return 0;
  }
  {
    std::vector<double> plain_one, tree_one, plain_batch, tree_batch;
    std::vector<double> ratio_one, ratio_batch;
    // Today's append is the one with its per-log checkpoint on (the tree
    // needs it on too).
    for (int round = 0; round < absl::GetFlag(FLAGS_tree_rounds); ++round) {
      const std::string suffix = absl::StrCat(round);
      plain_one.push_back(AppendThroughWriter(dir, grouped, 1000, nullptr, 1,
                                              "plain1-" + suffix, true));
      tree_one.push_back(AppendThroughWriter(dir, grouped, 1000, signer, 1,
                                             "tree1-" + suffix));
      plain_batch.push_back(AppendThroughWriter(dir, grouped, 1000, nullptr, 97,
                                                "plain97-" + suffix, true));
      tree_batch.push_back(AppendThroughWriter(dir, grouped, 1000, signer, 97,
                                               "tree97-" + suffix));
      ratio_one.push_back(plain_one.back() / tree_one.back());
      ratio_batch.push_back(plain_batch.back() / tree_batch.back());
    }
    std::printf(
        "append with the tree (lines per second, grouped fsync, checkpoint "
        "on; median of %d alternating rounds, best in brackets)\n",
        absl::GetFlag(FLAGS_tree_rounds));
    std::printf(
        "                              without tree          with "
        "tree+signing     cost ratio (median of rounds)\n");
    std::printf(
        "  writer, 1 event per call    %9.0f (%9.0f)   %9.0f (%9.0f)   "
        "%6.2f\n",
        Median(plain_one), Best(plain_one), Median(tree_one), Best(tree_one),
        Median(ratio_one));
    std::printf(
        "  writer, 97 events per call  %9.0f (%9.0f)   %9.0f (%9.0f)   "
        "%6.2f\n",
        Median(plain_batch), Best(plain_batch), Median(tree_batch),
        Best(tree_batch), Median(ratio_batch));
    std::printf(
        "  (targets: >= 100000 lines/s grouped; cost ratio <= 1.3)\n\n");
    std::fflush(stdout);
  }
  if (absl::GetFlag(FLAGS_tree_append_only)) return 0;

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

  MeasureProofs(dir, absl::GetFlag(FLAGS_tree_leaves));
  MeasureWitness(dir, absl::GetFlag(FLAGS_witness_requests));

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
  std::printf(
      "  ratio                 %8.2f  (target >= 1.27, the mapped "
      "reader's lowest)\n",
      best_sha / best_verify);
  const std::string verify_command = absl::StrCat(
      "HOME=", home, " ", audit, " verify --project ", project, " > /dev/null");
  std::printf(
      "  peak memory           %8.1f MiB  (verify; log %.1f MB: "
      "bounded, a few MiB)\n",
      PeakKib(verify_command) / 1024.0, mb);

  // The same log in a tree with a signed checkpoint (built by the auditor's
  // own recovery, which takes up lines the tree does not hold), verified
  // again: the chain and the tree each hash every line.
  {
    absl::StatusOr<std::unique_ptr<TreeAppender>> tree =
        TreeAppender::Open(audit_folder, "bench-tree");
    if (!tree.ok()) Die(std::string(tree.status().message()));
    const std::string origin = absl::StrCat(signer->name, "/", *folder);
    if (!(*tree)->WriteSignedCheckpoint(*signer, origin).ok()) Die("sign");
    if (!WriteFileAtomically(
             JoinPath((*tree)->folder(), "key"),
             FormatNoteVerifier(VerifierOf(*signer, kNoteEd25519)) + "\n", 0600)
             .ok()) {
      Die("key");
    }
  }
  double best_tree = 1e9, best_sha_again = 1e9;
  for (int i = 0; i < absl::GetFlag(FLAGS_repeat); ++i) {
    best_sha_again =
        std::min(best_sha_again,
                 Timed(absl::StrCat("sha256sum ", log_path, " > /dev/null")));
    best_tree = std::min(best_tree, Timed(verify_command));
  }
  std::printf("verify of the log and its tree (%.1f MB log)\n", mb);
  std::printf("  garuda-audit verify   %8.1f MB/s\n", mb / best_tree);
  std::printf("  sha256sum             %8.1f MB/s\n", mb / best_sha_again);
  std::printf("  ratio                 %8.2f  (target >= 1)\n",
              best_sha_again / best_tree);
  std::printf("  peak memory           %8.1f MiB\n",
              PeakKib(verify_command) / 1024.0);
  return 0;
}
