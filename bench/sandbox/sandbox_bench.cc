// Start-to-exit time of `true`: plain fork/exec, our sandbox (the
// garuda-stager program, and the library call alone), and bubblewrap with
// the same policy (binds, namespaces, seccomp filter), interleaved in one
// run so that they meet the same machine load; and the start of each
// program alone (--version). Prints the medians side by side: the wall
// time, and the CPU time (user + system, of this process and of every
// process it waited for), which a loaded machine disturbs less, and the
// page faults (minor faults of the same processes), which it does not
// disturb at all.
//
// The reference row, bwrap with the same policy, is given what a walk of
// /etc finds at each run (built in the timed loop, as the goals
// were set against). One-shot runs of ours use the walk stored between
// processes (sandbox/stored_walk.h); two more rows show each side without
// that difference: our library call walking at each run, and bwrap given
// the stored walk too.
//
//   bazel run -c opt //bench/sandbox:sandbox_bench -- [runs [OTHER-STAGER]]
//
// OTHER-STAGER: another garuda-stager program (an older build, say) timed
// in the same rounds.
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "lib/base/files.h"
#include "lib/base/unique_fd.h"
#include "lib/lockdown/seccomp_filter.h"
#include "lib/policy/merge.h"
#include "sandbox/bwrap_args.h"
#include "sandbox/command_policy.h"
#include "sandbox/private_walk.h"
#include "sandbox/sandbox.h"
#include "sandbox/stored_walk.h"

namespace garuda {
namespace {

double NowMs() {
  struct timespec now;
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  return now.tv_sec * 1e3 + now.tv_nsec / 1e6;
}

// Page faults so far of this process and of the processes it waited for.
double Faults() {
  double total = 0;
  for (int who : {RUSAGE_SELF, RUSAGE_CHILDREN}) {
    struct rusage usage;
    ::getrusage(who, &usage);
    total += usage.ru_minflt + usage.ru_majflt;
  }
  return total;
}

// CPU time so far of this process and of the processes it waited for.
double CpuMs() {
  double total = 0;
  for (int who : {RUSAGE_SELF, RUSAGE_CHILDREN}) {
    struct rusage usage;
    ::getrusage(who, &usage);
    for (const struct timeval& t : {usage.ru_utime, usage.ru_stime}) {
      total += t.tv_sec * 1e3 + t.tv_usec / 1e3;
    }
  }
  return total;
}

struct Method {
  std::string name;
  std::function<bool()> run;  // false: the run did not exit 0
  std::vector<double> times;
  std::vector<double> cpu;
  std::vector<double> faults;
};

double Median(std::vector<double>& values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

int Main(int argc, char** argv) {
  int runs = argc > 1 ? std::atoi(argv[1]) : 200;
  // bazel run starts us in our runfiles folder.
  std::string stager = "cmd/garuda-stager/garuda-stager";
  if (::access(stager.c_str(), X_OK) != 0) {
    std::fprintf(stderr,
                 "run me with: bazel run //bench/sandbox:sandbox_bench\n");
    return 2;
  }
  stager = std::filesystem::absolute(stager);
  std::string project = "/tmp/garuda-bench-XXXXXX";
  if (::mkdtemp(project.data()) == nullptr) return 2;
  std::string home = JoinPath(project, ".home");
  ::setenv("HOME", "/nonexistent-garuda-bench-home", 1);
  ::setenv("GARUDA_MANAGED_POLICY_DIR", "/nonexistent-garuda-bench-etc", 1);

  auto settings = MergeSettings(SettingsSources());
  CommandRequest request;
  request.project = project;
  request.working_directory = project;
  request.environment = CurrentEnvironment();
  auto policy = DirectCommandPolicy(*settings, request);
  if (!policy.ok()) {
    std::fprintf(stderr, "%s\n", policy.status().ToString().c_str());
    return 2;
  }
  auto seccomp = SeccompPolicyForRole("command", false);
  auto filter = SeccompFilter::Build(*seccomp);
  auto bpf = filter->ExportBpf();
  UniqueFd bpf_fd(::memfd_create("bench_bpf", 0));
  (void)WriteAll(bpf_fd.get(), *bpf);

  auto host = [&](std::vector<std::string> argv) {
    RunOptions options;
    options.argv = std::move(argv);
    options.capture_output = true;  // --version prints
    auto result = RunOnHost(options, project);
    return result.ok() && result->ok();
  };
  std::vector<Method> methods;
  methods.push_back({"fork/exec true", [&] { return host({"/bin/true"}); }});
  std::string bwrap = FindBwrap();
  if (!bwrap.empty()) {
    methods.push_back({"bwrap --version (start only)", [&] {
                         return host({bwrap, "--version"});
                       }});
    methods.push_back({"bwrap --unshare-all (same binds, seccomp)", [&] {
                         ::lseek(bpf_fd.get(), 0, SEEK_SET);
                         auto args = BwrapArgsFor(bwrap, *policy, bpf_fd.get());
                         args.push_back("/bin/true");
                         return host(args);
                       }});
    methods.push_back({"bwrap, denied paths from the stored walk", [&] {
                         ::lseek(bpf_fd.get(), 0, SEEK_SET);
                         auto args = BwrapArgsFor(bwrap, *policy, bpf_fd.get(),
                                                  &StoredWalk::ForThisMachine());
                         args.push_back("/bin/true");
                         return host(args);
                       }});
  }
  methods.push_back({"garuda-stager --version (start only)", [&] {
                       return host({stager, "--version"});
                     }});
  methods.push_back({"garuda-stager run -- true", [&] {
                       return host({stager, "run", "--project", project,
                                    "--mode", "direct", "--", "/bin/true"});
                     }});
  if (argc > 2) {
    std::string other = std::filesystem::absolute(argv[2]);
    methods.push_back({"OTHER --version (start only)", [&, other] {
                         return host({other, "--version"});
                       }});
    methods.push_back({"OTHER run -- true", [&, other] {
                         return host({other, "run", "--project", project,
                                      "--mode", "direct", "--", "/bin/true"});
                       }});
    std::printf("OTHER: %s\n", other.c_str());
  }
  methods.push_back({"RunInSandbox (library, no program start)", [&] {
                       RunOptions options;
                       options.argv = {"/bin/true"};
                       auto result = RunInSandbox(*policy, options);
                       return result.ok() && result->ok();
                     }});
  StoredWalk walk_each_run("", "");
  methods.push_back({"RunInSandbox, /etc walked at each run", [&] {
                       RunOptions options;
                       options.argv = {"/bin/true"};
                       options.stored_walk = &walk_each_run;
                       auto result = RunInSandbox(*policy, options);
                       return result.ok() && result->ok();
                     }});
  // As garuda-stager serve runs each command of a session: the walk of
  // /etc kept between runs (sandbox/private_walk.h).
  PrivateWalk kept_walk;
  methods.push_back({"RunInSandbox, /etc walk kept (as in serve)", [&] {
                       RunOptions options;
                       options.argv = {"/bin/true"};
                       options.private_walk = &kept_walk;
                       auto result = RunInSandbox(*policy, options);
                       return result.ok() && result->ok();
                     }});

  // Each round starts with the next method, so that none always follows the
  // same one (a namespace's teardown runs in the kernel after its exit).
  for (int i = 0; i < runs; ++i) {
    for (size_t k = 0; k < methods.size(); ++k) {
      Method& method = methods[(i + k) % methods.size()];
      double start = NowMs();
      double cpu = CpuMs();
      double faults = Faults();
      if (!method.run()) {
        std::fprintf(stderr, "%s: did not exit 0\n", method.name.c_str());
        return 1;
      }
      method.times.push_back(NowMs() - start);
      method.cpu.push_back(CpuMs() - cpu);
      method.faults.push_back(Faults() - faults);
    }
  }
  std::error_code ignored;
  std::filesystem::remove_all(project, ignored);

  std::printf(
      "start-to-exit of `true`, %d runs each, interleaved, order rotated\n",
      runs);
  std::printf("%-45s %10s %10s %10s %8s\n", "method", "median ms", "p90 ms",
              "CPU ms", "faults");
  for (Method& method : methods) {
    double median = Median(method.times);
    std::printf("%-45s %10.2f %10.2f %10.2f %8.0f\n", method.name.c_str(),
                median, method.times[method.times.size() * 9 / 10],
                Median(method.cpu), Median(method.faults));
  }
  // Issue 32's goals: each ratio to bwrap's median of this same run.
  auto median_of = [&](const std::string& name) {
    for (Method& method : methods) {
      if (method.name == name) return Median(method.times);
    }
    return 0.0;
  };
  double bwrap_ms = median_of("bwrap --unshare-all (same binds, seccomp)");
  if (bwrap_ms > 0) {
    const struct {
      const char* name;
      double goal;
    } goals[] = {{"garuda-stager run -- true", 0.8},
                 {"RunInSandbox (library, no program start)", 0.6},
                 {"RunInSandbox, /etc walk kept (as in serve)", 0.6}};
    for (const auto& goal : goals) {
      double ours = median_of(goal.name);
      if (ours <= 0) continue;
      std::printf("%-45s %9.2fx of bwrap (goal: at most %.1fx; %s)\n",
                  goal.name, ours / bwrap_ms, goal.goal,
                  ours / bwrap_ms <= goal.goal ? "met" : "not met");
    }
    double stored_bwrap_ms =
        median_of("bwrap, denied paths from the stored walk");
    if (stored_bwrap_ms > 0) {
      std::printf(
          "against bwrap given the stored walk too (%.2f ms): garuda-stager "
          "run %.2fx, the library call %.2fx\n",
          stored_bwrap_ms,
          median_of("garuda-stager run -- true") / stored_bwrap_ms,
          median_of("RunInSandbox (library, no program start)") /
              stored_bwrap_ms);
    }
  }
  double load[3];
  if (::getloadavg(load, 3) == 3) {
    std::printf("load average at the end: %.2f %.2f %.2f\n", load[0], load[1],
                load[2]);
  }
  std::printf(
      "CPU ms and faults: of the process started and the processes it "
      "waited for;\n  bwrap's PID 1 and garuda-stager run's are not waited "
      "for (both return once\n  the command's status is in), the library "
      "call's is. garuda-stager's faults\n  include the pages it makes "
      "present with MADV_POPULATE_WRITE (perf's\n  page-faults event counts "
      "only real faults).\n");
  if (bwrap.empty()) std::printf("bwrap is not installed: no reference row\n");
  return 0;
}

}  // namespace
}  // namespace garuda

int main(int argc, char** argv) { return garuda::Main(argc, argv); }
