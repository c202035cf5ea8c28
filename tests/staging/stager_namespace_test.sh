#!/bin/bash
# In staged mode no Garuda process but the applier can write the project:
# garuda-stager holds the project through a read-only bind in its own mount
# namespace (it mounts, so it has no Landlock of its own). While
# a staged command waits on a fifo, this test
#   - writes to the project through the stager's mount namespace (nsenter
#     -m, and /proc/PID/root): both fail, the project is unchanged;
#   - negative control: the same write from outside that namespace lands;
#   - checks that the command's own write to the project's absolute path
#     lands in staging only (the ChangeSet lists it, the project has none).
# For the overlay and the copy backend. Needs root (nsenter) and real /tmp.
set -u

source "$(dirname "$0")/test_env.sh" stager-ns


if ! command -v nsenter >/dev/null; then
  echo "nsenter (util-linux) is missing" >&2
  exit 1
fi

run_backend() {
  BACKEND="$1"
  P="$T/project-$BACKEND"
  S="$T/sync-$BACKEND"
  mkdir -p "$P" "$S"
  (cd "$P" && echo base >x.txt && git init -q && git add -A &&
    git -c user.name=t -c user.email=t@t commit -qm init)
  mkfifo "$S/ready" "$S/go"
  cd "$P" || exit 1
  # The command writes the project's absolute path, says it is ready, and
  # waits until the test lets it go.
  "$STAGER" run --mode staged --backend "$BACKEND" --write "$S" \
    --out "$T/cs-$BACKEND" -- \
    sh -c "echo from-command > '$P/cmd.txt'; echo ready > '$S/ready'; cat '$S/go' >/dev/null" \
    2>"$T/err-$BACKEND" &
  local guard=$!
  # Blocks until the command opened the fifo (bounded: a stager that fails
  # early must not hang the test).
  if ! timeout 120 cat "$S/ready" >/dev/null; then
    fail "the staged command never became ready: $(cat "$T/err-$BACKEND")"
    kill "$guard" 2>/dev/null
    wait "$guard"
    return
  fi
  # The process started is the staged run's guard (lib/staging/staged_guard.h),
  # which stays in the host's namespaces and writes only beneath the staging
  # root (Landlock, lib/lockdown/stager_lockdown_test); the view and the
  # read-only bind are in its one child, the run.
  local stager
  stager=$(cat "/proc/$guard/task/$guard/children")
  stager=${stager%% *}
  check "the guard has one child, the run" test -n "$stager"

  check "the stager has its own mount namespace" \
    test "$(readlink /proc/$stager/ns/mnt)" != "$(readlink /proc/self/ns/mnt)"
  # (sh exits 2 when a redirection fails; the message says why.)
  nsenter -m -t "$stager" sh -c "echo evil > '$P/evil.txt'" 2>"$T/ns-err"
  check "a write through the stager's mount namespace fails" test $? -ne 0
  check "  as a read-only file system" contains "$(cat "$T/ns-err")" "Read-only"
  nsenter -m -t "$stager" sh -c "echo evil >> '$P/x.txt'" 2>"$T/ns-err"
  check "an append to a project file there fails too" test $? -ne 0
  check "  as a read-only file system" contains "$(cat "$T/ns-err")" "Read-only"
  (echo evil >"/proc/$stager/root$P/evil2.txt") 2>"$T/ns-err"
  check "a write through /proc/PID/root fails" test $? -ne 0
  check "  as a read-only file system" contains "$(cat "$T/ns-err")" "Read-only"
  check "the project has no evil.txt" absent "$P/evil.txt"
  check "the project has no evil2.txt" absent "$P/evil2.txt"
  check "x.txt unchanged" same "$(cat "$P/x.txt")" "base"

  # Negative control: the same write from outside that namespace lands.
  echo person >"$P/outside.txt"
  check "negative control: a write outside the namespace lands" \
    same "$(cat "$P/outside.txt")" "person"
  rm -f "$P/outside.txt"

  echo go >"$S/go"
  wait "$guard"
  check "the staged command succeeded" same "$?" 0
  check "the command's write did not reach the project" absent "$P/cmd.txt"
  check "the command's write is in the change list" \
    contains "$("$APPLIER" show <"$T/cs-$BACKEND")" "cmd.txt"
}

run_backend overlay
run_backend copy

if [[ $failures -gt 0 ]]; then
  echo "$failures checks failed" >&2
  exit 1
fi
echo "all checks passed"
