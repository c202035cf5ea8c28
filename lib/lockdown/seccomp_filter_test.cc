// The command filter in real processes (each in a forked child, with its
// negative control), the golden files, and the errors of bad policies.
#include "lib/lockdown/seccomp_filter.h"

#include <fcntl.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "lib/base/json_message.h"
#include "lib/lockdown/seccomp_golden.h"
#include "lib/lockdown/test_child.h"

namespace garuda {
namespace {

using ::testing::HasSubstr;

// One "name=result" line per attempt. The order matters for the negative
// control: a new user namespace takes away the host capabilities that
// mount, fsopen and TIOCSTI need, and a traced child would stop on the
// SIGCHLD of its clone, so unshare and ptrace come last.
std::string CommandAttempts() {
  std::string out;
  // A new user namespace through clone(2); the new child leaves at once.
  long rc = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, nullptr, nullptr,
                    nullptr, nullptr);
  if (rc == 0) _exit(0);
  absl::StrAppend(&out, "clone_newuser=", ErrnoName(rc), "\n");
  if (rc > 0) waitpid(static_cast<pid_t>(rc), nullptr, 0);
  // clone3 with a size of 0: the kernel says EINVAL, the filter ENOSYS.
  rc = syscall(SYS_clone3, nullptr, 0);
  absl::StrAppend(&out, "clone3=", ErrnoName(rc), "\n");
  // A mount point that does not exist: the kernel says ENOENT, the filter
  // EPERM; nothing on the host is ever mounted.
  rc = mount("none", "/nonexistent-garuda-mount-point", "tmpfs", 0, nullptr);
  absl::StrAppend(&out, "mount=", ErrnoName(rc), "\n");
  // A file system context only; nothing is mounted.
  rc = syscall(SYS_fsopen, "tmpfs", 0);
  absl::StrAppend(&out, "fsopen=", ErrnoName(rc), "\n");
  if (rc >= 0) close(static_cast<int>(rc));

  // Our own pseudo-terminal, so nothing reaches a real one.
  int terminal = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (terminal >= 0 && grantpt(terminal) == 0 && unlockpt(terminal) == 0) {
    char c = 'x';
    rc = ioctl(terminal, TIOCSTI, &c);
    absl::StrAppend(&out, "tiocsti=", ErrnoName(rc), "\n");
    // The kernel ignores the upper half of the request; the filter must too.
    rc = ioctl(terminal, TIOCSTI | (1UL << 32), &c);
    absl::StrAppend(&out, "tiocsti_high=", ErrnoName(rc), "\n");
  } else {
    absl::StrAppend(&out, "tiocsti=no terminal\n");
  }
  if (terminal >= 0) close(terminal);

  rc = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  absl::StrAppend(&out, "socket_inet=", ErrnoName(rc), "\n");
  if (rc >= 0) close(static_cast<int>(rc));
  rc = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, 0);
  absl::StrAppend(&out, "socket_netlink=", ErrnoName(rc), "\n");
  if (rc >= 0) close(static_cast<int>(rc));
  rc = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  absl::StrAppend(&out, "socket_unix=", ErrnoName(rc), "\n");
  if (rc >= 0) close(static_cast<int>(rc));

  rc = unshare(CLONE_NEWUSER);
  absl::StrAppend(&out, "unshare_user=", ErrnoName(rc), "\n");
  rc = ptrace(PTRACE_TRACEME, 0, nullptr, nullptr);
  absl::StrAppend(&out, "ptrace_traceme=", ErrnoName(rc), "\n");
  return out;
}

// Builds and loads the compiled-in filter of `role` in this process.
absl::Status LoadRoleFilter(const std::string& role,
                            bool allow_network = false) {
  absl::StatusOr<SeccompPolicy> policy =
      SeccompPolicyForRole(role, allow_network);
  if (!policy.ok()) return policy.status();
  absl::StatusOr<SeccompFilter> filter = SeccompFilter::Build(*policy);
  if (!filter.ok()) return filter.status();
  return filter->Load();
}

std::string AttemptsUnderCommandFilter(bool allow_network) {
  absl::Status status = LoadRoleFilter("command", allow_network);
  return status.ok() ? CommandAttempts() : status.ToString();
}

TEST(CommandFilterTest, DeniesEscapesAndNetworkSockets) {
  absl::StatusOr<std::string> result =
      RunInChild([] { return AttemptsUnderCommandFilter(false); });
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(*result,
            "clone_newuser=EPERM\nclone3=ENOSYS\nmount=EPERM\nfsopen=ENOSYS\n"
            "tiocsti=EPERM\ntiocsti_high=EPERM\nsocket_inet=EPERM\n"
            "socket_netlink=EPERM\nsocket_unix=0\nunshare_user=EPERM\n"
            "ptrace_traceme=EPERM\n");
}

TEST(CommandFilterTest, NetworkVariantAllowsInetSockets) {
  absl::StatusOr<std::string> result =
      RunInChild([] { return AttemptsUnderCommandFilter(true); });
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_THAT(*result, HasSubstr("ptrace_traceme=EPERM\n"));
  EXPECT_THAT(*result, HasSubstr("unshare_user=EPERM\n"));
  EXPECT_THAT(*result, HasSubstr("tiocsti=EPERM\n"));
  EXPECT_THAT(*result, HasSubstr("socket_inet=0\n"));
  EXPECT_THAT(*result, HasSubstr("socket_unix=0\n"));
}

// Negative control: without the filter the kernel lets this (root) child do
// each of these, or answers with another errno, so the results above come
// from the filter.
TEST(CommandFilterTest, NegativeControlWithoutFilter) {
  absl::StatusOr<std::string> result = RunInChild(CommandAttempts);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_THAT(*result, HasSubstr("ptrace_traceme=0\n"));
  EXPECT_THAT(*result, HasSubstr("clone3=EINVAL\n"));
  EXPECT_THAT(*result, HasSubstr("socket_inet=0\n"));
  EXPECT_THAT(*result, HasSubstr("socket_netlink=0\n"));
  EXPECT_THAT(*result, HasSubstr("socket_unix=0\n"));
  EXPECT_THAT(*result, HasSubstr("mount=ENOENT\n"));
  if (geteuid() == 0) {
    EXPECT_THAT(*result, HasSubstr("fsopen=0\n"));
    // These need privilege (CAP_SYS_ADMIN) or user namespaces on the host.
    EXPECT_THAT(*result, HasSubstr("tiocsti=0\n"));
    EXPECT_THAT(*result, HasSubstr("tiocsti_high=0\n"));
    EXPECT_THAT(*result, HasSubstr("unshare_user=0\n"));
    EXPECT_THAT(*result, HasSubstr("clone_newuser=0\n"));
  }
}

TEST(CommandFilterTest, PtraceAttachToAnotherProcessIsDenied) {
  pid_t target = fork();
  ASSERT_GE(target, 0);
  if (target == 0) {
    pause();
    _exit(0);
  }
  auto attach = [target]() -> std::string {
    long rc = ptrace(PTRACE_ATTACH, target, nullptr, nullptr);
    std::string out = ErrnoName(rc);
    if (rc == 0) ptrace(PTRACE_DETACH, target, nullptr, nullptr);
    return out;
  };
  absl::StatusOr<std::string> filtered = RunInChild([&attach] {
    absl::Status status = LoadRoleFilter("command");
    return status.ok() ? attach() : status.ToString();
  });
  absl::StatusOr<std::string> control = RunInChild(attach);
  kill(target, SIGKILL);
  waitpid(target, nullptr, 0);
  ASSERT_TRUE(filtered.ok()) << filtered.status();
  ASSERT_TRUE(control.ok()) << control.status();
  EXPECT_EQ(*filtered, "EPERM");
  if (geteuid() == 0) {
    EXPECT_EQ(*control, "0");
  }
}

#if defined(__x86_64__)
constexpr long kI386Unshare = 310;
constexpr long kX32Bit = 0x40000000;

// A 32-bit system call from this 64-bit process, as a 32-bit program would
// make it.
long Int80(long number, long arg0) {
  long result;
  asm volatile("int $0x80"
               : "=a"(result)
               : "a"(number), "b"(arg0)
               : "rcx", "r8", "r9", "r10", "r11", "memory");
  return result;
}

std::string Unshare32() {
  return absl::StrCat(Int80(kI386Unshare, CLONE_NEWUSER));
}

// Negative control of the 32-bit tests: without a filter the call works, or
// the kernel has no 32-bit emulation (then the child dies of SIGSEGV).
absl::StatusOr<std::string> Unshare32WithoutFilter() {
  return RunInChild(Unshare32);
}

TEST(ArchitectureTest, ThirtyTwoBitCallsMeetTheCommandRules) {
  absl::StatusOr<std::string> control = Unshare32WithoutFilter();
  if (!control.ok()) {
    GTEST_SKIP() << "this kernel runs no 32-bit calls: " << control.status();
  }
  if (geteuid() == 0) {
    EXPECT_EQ(*control, "0");
  }
  absl::StatusOr<std::string> filtered = RunInChild([] {
    absl::Status status = LoadRoleFilter("command");
    return status.ok() ? Unshare32() : status.ToString();
  });
  ASSERT_TRUE(filtered.ok()) << filtered.status();
  EXPECT_EQ(*filtered, absl::StrCat(-EPERM));
}

TEST(ArchitectureTest, ThirtyTwoBitCallsKillADaemon) {
  absl::StatusOr<std::string> control = Unshare32WithoutFilter();
  if (!control.ok()) {
    GTEST_SKIP() << "this kernel runs no 32-bit calls: " << control.status();
  }
  // The auditor's filter has only x86_64: a 32-bit call kills the caller.
  absl::StatusOr<std::string> result = RunInChild([]() -> std::string {
    absl::Status status = LoadRoleFilter("auditor");
    return status.ok() ? "returned " + Unshare32() : status.ToString();
  });
  EXPECT_THAT(result.status().message(), HasSubstr("signal 31"));
}

TEST(ArchitectureTest, X32CallsAreKilled) {
  auto unshare_x32 = []() -> std::string {
    return absl::StrCat(
        "returned ", ErrnoName(syscall(kX32Bit | SYS_unshare, CLONE_NEWUSER)));
  };
  // Negative control: without a filter the kernel answers (0, or ENOSYS
  // when x32 is off).
  absl::StatusOr<std::string> control = RunInChild(unshare_x32);
  ASSERT_TRUE(control.ok()) << control.status();
  absl::StatusOr<std::string> result = RunInChild([&unshare_x32] {
    absl::Status status = LoadRoleFilter("command");
    return status.ok() ? unshare_x32() : status.ToString();
  });
  EXPECT_THAT(result.status().message(), HasSubstr("signal 31"));
}
#endif  // __x86_64__

TEST(GoldenTest, EveryExportedFilterMatchesItsGoldenFile) {
  // Regenerate after a policy change with
  //   bazel run //lib/lockdown:export_seccomp_golden --
  //   "$PWD/policies/seccomp/golden"
  std::vector<GoldenFilter> goldens = AllGoldenFilters();
  ASSERT_EQ(goldens.size(), 22u);
  for (const GoldenFilter& golden : goldens) {
    absl::StatusOr<std::string> pfc = GoldenPfc(golden);
    ASSERT_TRUE(pfc.ok()) << golden.file_name << ": " << pfc.status();
    absl::StatusOr<std::string> expected =
        ReadFileToString(JoinPath("policies/seccomp/golden", golden.file_name));
    ASSERT_TRUE(expected.ok()) << expected.status();
    EXPECT_EQ(*pfc, *expected)
        << golden.file_name
        << " differs from the filter the policy builds; if the policy change "
           "is meant, regenerate the golden files (see the comment above)";
  }
}

TEST(GoldenTest, NegativeControlAChangedPolicyChangesTheExport) {
  absl::StatusOr<SeccompPolicy> policy = SeccompPolicyForRole("auditor", false);
  ASSERT_TRUE(policy.ok()) << policy.status();
  absl::StatusOr<SeccompFilter> filter = SeccompFilter::Build(*policy);
  ASSERT_TRUE(filter.ok()) << filter.status();
  policy->mutable_rules()->RemoveLast();
  absl::StatusOr<SeccompFilter> changed = SeccompFilter::Build(*policy);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_NE(*filter->ExportPfc(), *changed->ExportPfc());
}

TEST(PolicyTest, RolesAreCompiledIn) {
  EXPECT_EQ(SeccompRoleNames(),
            (std::vector<std::string>{"agent", "applier", "auditor", "budgeter",
                                      "code_tools", "code_tools_lsp",
                                      "command", "command_proxied", "proxy",
                                      "stager", "witness"}));
}

TEST(PolicyTest, NetworkChoiceDropsOnlyNetworkOffRules) {
  absl::StatusOr<SeccompPolicy> off = SeccompPolicyForRole("agent", false);
  absl::StatusOr<SeccompPolicy> on = SeccompPolicyForRole("agent", true);
  ASSERT_TRUE(off.ok() && on.ok());
  EXPECT_EQ(off->rules_size(), on->rules_size() + 1);
  for (const SeccompRule& rule : on->rules())
    EXPECT_FALSE(rule.network_off_only());
}

TEST(PolicyTest, LoadFromFilesMatchesCompiledIn) {
  absl::StatusOr<SeccompPolicy> from_file =
      LoadSeccompPolicy("policies/seccomp/command.json");
  ASSERT_TRUE(from_file.ok()) << from_file.status();
  absl::StatusOr<SeccompPolicy> built_in =
      SeccompPolicyForRole("command", false);
  ASSERT_TRUE(built_in.ok());
  EXPECT_EQ(from_file->SerializeAsString(), built_in->SerializeAsString());
}

absl::Status BuildFromJson(const std::string& json) {
  SeccompPolicy policy;
  absl::Status status = ParseJsonMessage(json, "test.json", &policy);
  if (!status.ok()) return status;
  return SeccompFilter::Build(policy).status();
}

TEST(PolicyTest, BadPoliciesNameWhatIsWrong) {
  EXPECT_THAT(BuildFromJson(R"({"rules": []})").message(),
              HasSubstr("no defaultAction"));
  EXPECT_THAT(BuildFromJson(R"({"defaultAction": "maybe"})").message(),
              HasSubstr("unknown action \"maybe\""));
  EXPECT_THAT(
      BuildFromJson(
          R"({"defaultAction": "allow", "rules": [{"syscalls": ["nosuchcall"], "action": "EPERM"}]})")
          .message(),
      HasSubstr("rule 1 (nosuchcall): unknown system call \"nosuchcall\""));
  EXPECT_THAT(
      BuildFromJson(
          R"({"defaultAction": "allow", "rules": [{"syscalls": ["ioctl"], "action": "EPERM", "conditions": [{"arg": 1, "op": "EQ", "value": "TIOCSTX"}]}]})")
          .message(),
      HasSubstr("\"TIOCSTX\" is neither a number nor a known constant"));
  EXPECT_THAT(
      BuildFromJson(
          R"({"defaultAction": "allow", "rules": [{"syscalls": ["ioctl"], "action": "EPERM", "conditions": [{"arg": 7, "op": "EQ", "value": "1"}]}]})")
          .message(),
      HasSubstr("arg 7 is not 0 to 5"));
  EXPECT_THAT(
      BuildFromJson(R"({"defaultAction": "allow", "architectures": ["vax"]})")
          .message(),
      HasSubstr("unknown architecture \"vax\""));
  EXPECT_THAT(
      BuildFromJson(R"({"defaultAction": "allow", "sycalls": []})").message(),
      HasSubstr("sycalls"));
}

TEST(PolicyTest, IncludedPartMayNotSetDefaultAction) {
  const char* tmp = getenv("TEST_TMPDIR");
  ASSERT_NE(tmp, nullptr);
  const std::string folder = JoinPath(tmp, "include-test");
  ASSERT_TRUE(MakeDirectories(folder, 0700).ok());
  ASSERT_TRUE(WriteFileAtomically(JoinPath(folder, "part.json"),
                                  R"({"defaultAction": "kill"})", 0600)
                  .ok());
  ASSERT_TRUE(WriteFileAtomically(
                  JoinPath(folder, "top.json"),
                  R"({"defaultAction": "allow", "include": ["part"]})", 0600)
                  .ok());
  ASSERT_TRUE(WriteFileAtomically(
                  JoinPath(folder, "escape.json"),
                  R"({"defaultAction": "allow", "include": ["../x"]})", 0600)
                  .ok());
  EXPECT_THAT(
      LoadSeccompPolicy(JoinPath(folder, "top.json")).status().message(),
      HasSubstr("only the top policy may"));
  EXPECT_THAT(
      LoadSeccompPolicy(JoinPath(folder, "escape.json")).status().message(),
      HasSubstr("is not a policy name"));
}

// Compiled once per process: the same bytes as a fresh compile of the same
// role, each time, and another role or network choice gives its own.
TEST(PolicyTest, ACompiledRoleIsTheSameProgramEachTime) {
  for (bool network : {false, true}) {
    auto policy = SeccompPolicyForRole("command", network);
    ASSERT_TRUE(policy.ok()) << policy.status();
    auto fresh = SeccompFilter::Build(*policy);
    ASSERT_TRUE(fresh.ok()) << fresh.status();
    auto expected = fresh->ExportBpf();
    ASSERT_TRUE(expected.ok());
    for (int i = 0; i < 3; ++i) {
      auto bpf = SeccompBpfForRole("command", network);
      ASSERT_TRUE(bpf.ok()) << bpf.status();
      EXPECT_EQ(*bpf, *expected) << "network " << network << ", call " << i;
    }
  }
  EXPECT_NE(*SeccompBpfForRole("command", false),
            *SeccompBpfForRole("command", true));
  EXPECT_NE(*SeccompBpfForRole("command", false),
            *SeccompBpfForRole("stager", false));
  EXPECT_FALSE(SeccompBpfForRole("no-such-role", false).ok());
}

}  // namespace
}  // namespace garuda
