// Reserve-and-settle round trips against the real garuda-budgeter, with 1, 8
// and 64 clients (each client its own channel: the top agent, or a child
// opened by it, driven from its own thread). Prints the median and p99 of one
// Reserve + Settle pair, beside references measured in the same run:
//   in-process ledger:  the same pair on a Ledger in this process (no IPC, no
//                       journal): what the ordering itself costs;
//   echo, process to process: two request/reply exchanges of the same
//                       messages over the same channel code with a child
//                       process that answers at once: the floor of any design
//                       with the ledger in another process;
//   echo, thread to thread: the same with a thread of this process (no
//                       address-space switch);
//   fdatasync alone:    what a sync of the journal's disk costs (it is no
//                       longer on the answer path: see lib/budget/journal.h);
//   in-process + journal: the pair on a journaled ledger in this process,
//                       with the write of each grant (no fdatasync).
//
//   bazel run -c opt //bench/budget:budget_bench [-- --iterations=N]
//       [--journal-dirs=/tmp,/dev/shm] [--clients=1,8,64] [--rounds=5]
//       [--pair-only]
//
// Then issue 32's goal row: the single client's pair against the process
// echo, the two interleaved for --rounds rounds, with the ratio of each round,
// the median ratio and the load average. --pair-only runs just that (and is
// what `strace -f` and callgrind are pointed at: see docs/budget.md).
//
// The journal goes to a temporary HOME (removed at the end) on the disk
// (/tmp) and on tmpfs (/dev/shm). See bench/budget/README.md.
#include <fcntl.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "bench/budget/child_start.h"
#include "lib/base/files.h"
#include "lib/budget/journal.h"
#include "lib/budget/ledger.h"
#include "lib/budget/meter.h"
#include "lib/ipc/channel.h"
#include "lib/ipc/helper_process.h"

namespace garuda {
namespace budget {
namespace {

using Clock = std::chrono::steady_clock;

struct Figures {
  double median_us = 0, p99_us = 0;
  size_t samples = 0;
  double per_second = 0;
};

Figures Summarize(std::vector<double> samples, double seconds) {
  Figures figures;
  if (samples.empty()) return figures;
  std::sort(samples.begin(), samples.end());
  figures.samples = samples.size();
  figures.median_us = samples[samples.size() / 2];
  figures.p99_us =
      samples[std::min(samples.size() - 1, samples.size() * 99 / 100)];
  figures.per_second = samples.size() / seconds;
  return figures;
}

void Print(const std::string& what, int clients, const Figures& figures) {
  std::printf("%-34s %8d %10zu %12.1f %12.1f %12.0f\n", what.c_str(), clients,
              figures.samples, figures.median_us, figures.p99_us,
              figures.per_second);
}

double Micros(Clock::time_point start, Clock::time_point end) {
  return std::chrono::duration<double, std::micro>(end - start).count();
}

// `iterations` Reserve + Settle pairs over `client`; the latency of each.
absl::Status RoundTrips(BudgetClient& client, int iterations,
                        std::vector<double>* samples) {
  for (int i = 0; i < iterations; ++i) {
    Clock::time_point start = Clock::now();
    auto reserved = client.Reserve(1000, "bench", "r");
    if (!reserved.ok()) return reserved.status();
    if (!reserved->granted()) return absl::ResourceExhaustedError("refused");
    auto settled = client.Settle(reserved->reservation(), 600, true);
    if (!settled.ok()) return settled.status();
    samples->push_back(Micros(start, Clock::now()));
  }
  return absl::OkStatus();
}

// `clients` agents at once: the top agent alone when it is 1 and not
// `as_children`, else that many children of it, each on its own channel.
absl::StatusOr<Figures> Budgeter(const std::string& budgeter_path, int clients,
                                 int iterations, bool as_children = false) {
  const bool top_only = clients == 1 && !as_children;
  ipc::HelperOptions options;
  options.argv = {
      budgeter_path, "serve", "--channel-fd=3",
      absl::StrCat("--session=bench-", as_children ? "children-" : "", clients),
      absl::StrCat("--limit=", kMaxTokens)};
  options.channel = BudgeterChannelOptions();
  auto process = ipc::HelperProcess::Spawn(options);
  if (!process.ok()) return process.status();
  BudgetClient top(process->get());
  std::vector<std::unique_ptr<BudgetClient>> agents;
  if (top_only) {
    // The top agent itself.
  } else {
    for (int i = 0; i < clients; ++i) {
      auto child = top.OpenChild(kMaxTokens / (clients + 1), "bench");
      if (!child.ok()) return child.status();
      agents.push_back(std::make_unique<BudgetClient>(
          ipc::Channel(std::move(child->channel), BudgeterChannelOptions())));
    }
  }
  std::vector<std::vector<double>> samples(clients);
  std::vector<absl::Status> results(clients);
  // Warm up (page faults, first journal writes) outside the measurement.
  std::vector<double> ignored;
  if (top_only) {
    if (auto s = RoundTrips(top, 200, &ignored); !s.ok()) return s;
  }
  Clock::time_point start = Clock::now();
  if (top_only) {
    results[0] = RoundTrips(top, iterations, &samples[0]);
  } else {
    std::vector<std::thread> threads;
    for (int i = 0; i < clients; ++i) {
      threads.emplace_back([&, i] {
        results[i] = RoundTrips(*agents[i], iterations, &samples[i]);
      });
    }
    for (std::thread& thread : threads) thread.join();
  }
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  for (const absl::Status& result : results) {
    if (!result.ok()) return result;
  }
  std::vector<double> all;
  for (auto& part : samples) all.insert(all.end(), part.begin(), part.end());
  agents.clear();
  absl::Status stopped = (*process)->Stop();
  if (!stopped.ok()) return stopped;
  return Summarize(std::move(all), seconds);
}

Figures InProcessLedger(int iterations) {
  Ledger ledger(kMaxTokens);
  std::vector<double> samples;
  Clock::time_point begin = Clock::now();
  for (int i = 0; i < iterations; ++i) {
    Clock::time_point start = Clock::now();
    auto reserved = ledger.Reserve(kTopAgent, 1000);
    (void)ledger.Settle(kTopAgent, reserved->reservation, 600, true);
    samples.push_back(Micros(start, Clock::now()));
  }
  return Summarize(std::move(samples),
                   std::chrono::duration<double>(Clock::now() - begin).count());
}

// The same pair through the journal, in this process: the ledger plus the
// formatting and the write of each grant's record (the settle's waits for the
// next write; fdatasync comes when the journal is closed).
absl::StatusOr<Figures> InProcessJournal(const std::string& home,
                                         int iterations) {
  auto journal = JournaledLedger::Open(
      {JoinPath(home, ".garuda/sessions/bench-journal/budget.jsonl"),
       kMaxTokens});
  if (!journal.ok()) return journal.status();
  std::vector<double> samples;
  Clock::time_point begin = Clock::now();
  for (int i = 0; i < iterations; ++i) {
    Clock::time_point start = Clock::now();
    auto reserved = (*journal)->Reserve(kTopAgent, 1000, "bench", "r");
    if (!reserved.ok()) return reserved.status();
    if (auto s = (*journal)->Commit(); !s.ok()) return s;
    auto settled =
        (*journal)->Settle(kTopAgent, reserved->reservation, 600, true);
    if (!settled.ok()) return settled.status();
    if (auto s = (*journal)->Commit(); !s.ok()) return s;
    samples.push_back(Micros(start, Clock::now()));
  }
  return Summarize(std::move(samples),
                   std::chrono::duration<double>(Clock::now() - begin).count());
}

// The echoes read like the budgeter and its clients: one read per frame.
ipc::ChannelOptions EchoOptions() {
  ipc::ChannelOptions options;
  options.read_ahead = true;
  return options;
}

// Answers every request on `channel` at once with a fixed reply, until the
// peer hangs up.
void Echo(ipc::Channel channel) {
  BudgetRequest request;
  BudgetReply reply;
  reply.mutable_reserved()->set_granted(true);
  reply.mutable_reserved()->set_reservation(12345);
  reply.mutable_reserved()->set_left(kMaxTokens);
  while (channel.Receive(&request).ok()) {
    reply.set_seq(request.seq());
    if (!channel.Send(reply).ok()) break;
  }
}

// `iterations` times two request/reply exchanges of a Reserve-sized request
// with an echo on `channel`.
absl::StatusOr<Figures> EchoPairs(ipc::Channel& channel, int iterations) {
  std::vector<double> samples;
  BudgetRequest request;
  request.mutable_reserve()->set_tokens(1000);
  request.mutable_reserve()->set_purpose("bench");
  request.mutable_reserve()->set_request_id("r");
  BudgetReply reply;
  uint64_t seq = 0;
  Clock::time_point begin = Clock::now();
  for (int i = 0; i < iterations; ++i) {
    Clock::time_point start = Clock::now();
    for (int exchange = 0; exchange < 2; ++exchange) {
      request.set_seq(++seq);
      absl::Status status = channel.Send(request);
      if (status.ok()) status = channel.Receive(&reply);
      if (!status.ok()) return status;
    }
    samples.push_back(Micros(start, Clock::now()));
  }
  double seconds = std::chrono::duration<double>(Clock::now() - begin).count();
  return Summarize(std::move(samples), seconds);
}

// The echo on a thread of this process.
absl::StatusOr<Figures> ThreadEcho(int iterations) {
  auto pair = ipc::MakeSocketPair();
  if (!pair.ok()) return pair.status();
  std::thread echo([fd = pair->first.Release()] {
    Echo(ipc::Channel(UniqueFd(fd), EchoOptions()));
  });
  ipc::Channel channel(std::move(pair->second), EchoOptions());
  absl::StatusOr<Figures> figures = EchoPairs(channel, iterations);
  channel.Close();
  echo.join();
  return figures;
}

// The echo in a child process: each exchange switches between two address
// spaces, as every exchange with garuda-budgeter does. Called while this
// process has no other thread, so the child may run ordinary code.
absl::StatusOr<Figures> ProcessEcho(int iterations) {
  auto pair = ipc::MakeSocketPair();
  if (!pair.ok()) return pair.status();
  pid_t pid = ::fork();
  if (pid < 0) return absl::InternalError("fork failed");
  if (pid == 0) {
    pair->second.Reset();
    Echo(ipc::Channel(std::move(pair->first), EchoOptions()));
    ::_exit(0);
  }
  pair->first.Reset();
  ipc::Channel channel(std::move(pair->second), EchoOptions());
  absl::StatusOr<Figures> figures = EchoPairs(channel, iterations);
  channel.Close();
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return figures;
}

// write + fdatasync of one journal-sized line: what the disk adds to a grant.
Figures SyncAlone(const std::string& home, int iterations) {
  const std::string path = JoinPath(home, "sync-probe");
  UniqueFd fd(
      ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600));
  const std::string line(120, 'x');
  std::vector<double> samples;
  Clock::time_point begin = Clock::now();
  for (int i = 0; i < iterations; ++i) {
    Clock::time_point start = Clock::now();
    (void)!::write(fd.get(), line.data(), line.size());
    ::fdatasync(fd.get());
    samples.push_back(Micros(start, Clock::now()));
  }
  ::unlink(path.c_str());
  return Summarize(std::move(samples),
                   std::chrono::duration<double>(Clock::now() - begin).count());
}

std::string LoadAverage() {
  double load[3];
  if (::getloadavg(load, 3) != 3) return "unknown";
  return absl::StrFormat("%.2f %.2f %.2f", load[0], load[1], load[2]);
}

// Of an even count, the mean of the two middle values.
double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t half = values.size() / 2;
  return values.size() % 2 == 1 ? values[half]
                                : (values[half - 1] + values[half]) / 2;
}

// Issue 32's goal (at most 1.2 times the echo): the single client's pair and
// the process echo, alternated `rounds` times so that a change of load hits
// both; the journal under `base`. Runs no thread of its own (the echo forks).
int InterleavedRatio(const std::string& budgeter, const std::string& base,
                     int iterations, int rounds) {
  std::string templ = absl::StrCat(base, "/budget-bench-XXXXXX");
  if (::mkdtemp(templ.data()) == nullptr) {
    std::fprintf(stderr, "mkdtemp(%s) failed\n", templ.c_str());
    return 1;
  }
  ::setenv("HOME", templ.c_str(), 1);
  std::printf(
      "one client against the process echo, interleaved, %d pairs each, "
      "journal in %s; load average at the start %s, %u cores\n",
      iterations, base.c_str(), LoadAverage().c_str(),
      std::thread::hardware_concurrency());
  std::printf("%-8s %14s %14s %8s\n", "round", "echo us", "budgeter us",
              "ratio");
  std::vector<double> echoes, budgeters, ratios;
  int exit_code = 0;
  for (int round = 1; round <= rounds; ++round) {
    auto echo = ProcessEcho(iterations);
    auto ours = Budgeter(budgeter, 1, iterations);
    if (!echo.ok() || !ours.ok()) {
      std::fprintf(
          stderr, "round %d: %s\n", round,
          std::string((echo.ok() ? ours.status() : echo.status()).message())
              .c_str());
      exit_code = 1;
      break;
    }
    echoes.push_back(echo->median_us);
    budgeters.push_back(ours->median_us);
    ratios.push_back(ours->median_us / echo->median_us);
    std::printf("%-8d %14.1f %14.1f %8.2f\n", round, echo->median_us,
                ours->median_us, ratios.back());
  }
  if (!ratios.empty()) {
    std::printf("%-8s %14.1f %14.1f %8.2f   (goal: at most 1.20)\n", "median",
                Median(echoes), Median(budgeters), Median(ratios));
  }
  std::printf("load average at the end %s\n", LoadAverage().c_str());
  std::string cleanup = absl::StrCat("rm -rf '", templ, "'");
  (void)!std::system(cleanup.c_str());
  return exit_code;
}

int Main(int argc, char** argv) {
  int iterations = 3000;
  std::string budgeter = "cmd/garuda-budgeter/garuda-budgeter";
  std::vector<std::string> bases = {"/tmp", "/dev/shm"};
  std::vector<int> client_counts = {1, 8, 64};
  std::vector<int> child_counts = {1, 4, 16};
  int rounds = 5;
  bool pair_only = false;
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (absl::ConsumePrefix(&arg, "--iterations=")) {
      if (!absl::SimpleAtoi(arg, &iterations) || iterations < 100) return 2;
    } else if (absl::ConsumePrefix(&arg, "--rounds=")) {
      if (!absl::SimpleAtoi(arg, &rounds) || rounds < 1) return 2;
    } else if (arg == "--pair-only") {
      pair_only = true;
    } else if (absl::ConsumePrefix(&arg, "--budgeter=")) {
      budgeter = std::string(arg);
    } else if (absl::ConsumePrefix(&arg, "--journal-dirs=")) {
      bases = absl::StrSplit(arg, ',', absl::SkipEmpty());
    } else if (absl::ConsumePrefix(&arg, "--children=")) {
      child_counts.clear();
      for (absl::string_view part : absl::StrSplit(arg, ',')) {
        int count = 0;
        if (!absl::SimpleAtoi(part, &count) || count < 1 || count > 64) {
          return 2;
        }
        child_counts.push_back(count);
      }
    } else if (absl::ConsumePrefix(&arg, "--clients=")) {
      client_counts.clear();
      for (absl::string_view part : absl::StrSplit(arg, ',')) {
        int count = 0;
        if (!absl::SimpleAtoi(part, &count) || count < 1 || count > 256) {
          return 2;
        }
        client_counts.push_back(count);
      }
    } else {
      std::fprintf(stderr,
                   "usage: budget_bench [--iterations=N] [--budgeter=PATH]\n"
                   "  [--journal-dirs=/tmp,/dev/shm] [--clients=1,8,64]\n"
                   "  [--children=1,4,16] [--rounds=5] [--pair-only]\n");
      return 2;
    }
  }
  if (bases.empty()) return 2;
  if (pair_only) {
    return InterleavedRatio(budgeter, bases.front(), iterations, rounds);
  }
  std::printf(
      "reserve + settle round trip (one Reserve and one Settle), "
      "%d pairs per row\n",
      iterations);
  std::printf("%-34s %8s %10s %12s %12s %12s\n", "method", "clients", "samples",
              "median us", "p99 us", "pairs/s");
  Print("in-process ledger", 1, InProcessLedger(iterations));
  // Before any thread is started: the process echo forks.
  auto process_echo = ProcessEcho(iterations);
  auto thread_echo = ThreadEcho(iterations);
  for (const auto& [name, echo] :
       {std::make_pair("echo, process to process", &process_echo),
        std::make_pair("echo, thread to thread", &thread_echo)}) {
    if (!echo->ok()) {
      std::fprintf(stderr, "%s: %s\n", name,
                   std::string(echo->status().message()).c_str());
      return 1;
    }
    Print(name, 1, **echo);
  }

  int exit_code = 0;
  // The journal on the disk (/tmp) and on tmpfs (/dev/shm): the difference is
  // the fdatasync that every grant waits for.
  for (const std::string& base : bases) {
    std::string templ = absl::StrCat(base, "/budget-bench-XXXXXX");
    if (::mkdtemp(templ.data()) == nullptr) {
      std::fprintf(stderr, "mkdtemp(%s) failed; skipped\n", templ.c_str());
      continue;
    }
    const std::string home = templ;
    ::setenv("HOME", home.c_str(), 1);
    const std::string where = absl::StrCat(" (", base, ")");
    Print("fdatasync alone" + where, 1, SyncAlone(home, iterations));
    auto journaled = InProcessJournal(home, iterations);
    if (journaled.ok()) Print("in-process + journal" + where, 1, *journaled);
    for (int clients : client_counts) {
      // The same total work for each row: fewer pairs per client as they grow.
      auto figures =
          Budgeter(budgeter, clients, std::max(20, iterations / clients));
      if (!figures.ok()) {
        std::fprintf(stderr, "garuda-budgeter with %d clients: %s\n", clients,
                     std::string(figures.status().message()).c_str());
        exit_code = 1;
        continue;
      }
      Print("garuda-budgeter" + where, clients, *figures);
    }
    // Children of the top agent in parallel (their leases opened first),
    // beside the single agent's row above.
    for (int children : child_counts) {
      auto figures = Budgeter(budgeter, children,
                              std::max(20, iterations / children), true);
      if (!figures.ok()) {
        std::fprintf(stderr, "garuda-budgeter with %d children: %s\n", children,
                     std::string(figures.status().message()).c_str());
        exit_code = 1;
        continue;
      }
      Print("budgeter, children" + where, children, *figures);
    }
    if (base == bases.front()) {
      // The agent's own work per child start, the model excluded.
      const int rounds = std::max(5, iterations / 100);
      auto starts = MeasureChildStarts(budgeter, home, child_counts, rounds);
      if (!starts.ok()) {
        std::fprintf(stderr, "child starts: %s\n",
                     std::string(starts.status().message()).c_str());
        exit_code = 1;
      } else {
        std::printf(
            "agent turns, %d rounds each (scripted model on loopback):\n",
            rounds);
        std::printf("%-34s %8s %10s %12s %16s\n", "turn", "children",
                    "requests", "median us", "per child us");
        for (const ChildStartFigures& f : *starts) {
          std::printf("%-34s %8d %10d %12.1f %16s\n",
                      f.children == 0 ? "single agent, one request"
                                      : "task calls in one response",
                      f.children, f.requests, f.turn_us,
                      f.children == 0
                          ? "-"
                          : absl::StrFormat("%.1f", f.per_child_us).c_str());
        }
      }
    }
    std::string cleanup = absl::StrCat("rm -rf '", home, "'");
    (void)!std::system(cleanup.c_str());
  }
  std::printf("target: median under 50 us with one client\n\n");
  // Last: the rows above started threads, but all of them have ended.
  if (InterleavedRatio(budgeter, bases.front(), iterations, rounds) != 0) {
    exit_code = 1;
  }
  return exit_code;
}

}  // namespace
}  // namespace budget
}  // namespace garuda

int main(int argc, char** argv) { return garuda::budget::Main(argc, argv); }
