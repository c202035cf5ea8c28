#!/bin/bash
# garuda-stager run locks itself down before the command starts
# (LockDownStager, issue 12 point 2): its seccomp role refuses userfaultfd,
# and a filter is inherited, so the sandboxed command gets EPERM although
# its own filter allows the call; it also runs with no_new_privs and the
# stager's filter below its own. The negative control: the same call on
# the host (--allow-host, where the stager takes no lockdown: the person
# asked for the command to run as themselves) works.
#
# Usage (Bazel sets these): TEST_TMPDIR, TEST_SRCDIR. Run by hand:
#   TEST_TMPDIR=$(mktemp -d) STAGER=... APPLIER=... tests/staging/stager_lockdown_test.sh
set -u

source "$(dirname "$0")/test_env.sh" stager_lockdown

P="$T/project"
mkdir -p "$P"
(cd "$P" && echo x >x.txt && git init -q && git add -A && git -c user.name=t -c user.email=t@t commit -qm init)
cd "$P" || exit 1

ATTEMPT='import ctypes, os
number = {"x86_64": 323, "aarch64": 282}[os.uname().machine]
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.syscall(number, 1)  # userfaultfd(UFFD_USER_MODE_ONLY)
print("ok" if fd >= 0 else os.strerror(ctypes.get_errno()))'

out=$("$STAGER" run --mode direct -- python3 -c "$ATTEMPT" 2>"$T/err")
check "direct: userfaultfd refused in the sandbox" same "$out" "Operation not permitted"
# (Staged mode: the command's output is on stderr, the list on stdout.)
"$STAGER" run --mode staged --backend copy -- python3 -c "$ATTEMPT" >/dev/null 2>"$T/err"
out=$(grep -v '^garuda-stager:' "$T/err")
check "staged: userfaultfd refused in the sandbox" same "$out" "Operation not permitted"
out=$("$STAGER" run --mode direct -- grep -E '^(NoNewPrivs|Seccomp_filters):' /proc/self/status 2>"$T/err" | tr -s '\t ' ' ')
check "direct: no_new_privs and the stager's filter below the command's" same "$out" "NoNewPrivs: 1
Seccomp_filters: 2"

# Negative control: on the host, where the stager does not lock down.
out=$(GARUDA_TEST_ONLY_PRETEND_NO_SANDBOX=1 "$STAGER" run --mode direct --allow-host -- python3 -c "$ATTEMPT" 2>"$T/err")
check "control: the same call on the host works" same "$out" "ok"

echo "$checks checks, $failures failures" >&2
[[ $failures -eq 0 ]]
