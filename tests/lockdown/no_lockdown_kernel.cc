// no_lockdown_kernel PROGRAM [ARGS...]: runs PROGRAM as on a kernel without
// Landlock and without seccomp filters, so that a test can check that every
// Garuda program refuses to serve there (and, with
// --accept-weaker-lockdown, serves and says it is weaker).
//
// It installs a seccomp filter of its own, then execs PROGRAM. The filter
// answers the calls a lockdown needs as such a kernel does:
// landlock_create_ruleset, landlock_add_rule and landlock_restrict_self
// with ENOSYS (the Landlock probe then reads ABI 0), seccomp(2) with ENOSYS
// and prctl(PR_GET_SECCOMP / PR_SET_SECCOMP) with EINVAL (a kernel built
// without CONFIG_SECCOMP). Everything else is allowed. The filter is
// inherited by everything PROGRAM starts.
#include <errno.h>
#include <seccomp.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <initializer_list>

namespace {

int Refuse(scmp_filter_ctx filter, int error, const char* name) {
  int number = seccomp_syscall_resolve_name(name);
  if (number == __NR_SCMP_ERROR) {
    std::fprintf(stderr, "no_lockdown_kernel: unknown system call %s\n", name);
    return -1;
  }
  return seccomp_rule_add(filter, SCMP_ACT_ERRNO(error), number, 0);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: no_lockdown_kernel PROGRAM [ARGS...]\n");
    return 2;
  }
  scmp_filter_ctx filter = seccomp_init(SCMP_ACT_ALLOW);
  if (filter == nullptr) return 2;
  int failed = 0;
  for (const char* name : {"landlock_create_ruleset", "landlock_add_rule",
                           "landlock_restrict_self", "seccomp"}) {
    failed |= Refuse(filter, ENOSYS, name) != 0;
  }
  for (int option : {PR_GET_SECCOMP, PR_SET_SECCOMP}) {
    failed |= seccomp_rule_add(filter, SCMP_ACT_ERRNO(EINVAL), SCMP_SYS(prctl),
                               1, SCMP_A0(SCMP_CMP_EQ, option)) != 0;
  }
  // Its own filter needs no_new_privs without CAP_SYS_ADMIN.
  if (failed || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
      seccomp_load(filter) != 0) {
    std::fprintf(stderr, "no_lockdown_kernel: cannot install the filter\n");
    return 2;
  }
  seccomp_release(filter);
  execv(argv[1], argv + 1);
  std::fprintf(stderr, "no_lockdown_kernel: execv(%s): %s\n", argv[1],
               std::strerror(errno));
  return 127;
}
