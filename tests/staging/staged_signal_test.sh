#!/bin/bash
# A caught signal to `garuda-stager run --mode staged` removes the run's
# staging folder (issue 14, point 14): SIGTERM, SIGHUP and SIGINT, to the
# stager alone or to its whole process group, while the command runs, for
# both backends. The negative control is SIGKILL, which no handler can
# catch: the same run then leaves its folder behind (until the next start
# for the project removes it), so the checks can see a folder that stays.
#
# The test knows the command runs when the command writes a line into a
# FIFO in a --write folder: a real wait with a deadline (read -t), no sleep.
#
# Usage (Bazel sets these): TEST_TMPDIR, TEST_SRCDIR. Run by hand:
#   TEST_TMPDIR=$(mktemp -d) STAGER=... APPLIER=... tests/staging/staged_signal_test.sh
set -u

source "$(dirname "$0")/test_env.sh" staged_signal


P="$T/project"
mkdir -p "$P/src"
for i in $(seq 1 50); do echo "file $i" >"$P/src/f$i.txt"; done
(cd "$P" && git init -q && git add -A && git -c user.name=t -c user.email=t@t commit -qm init)
READY="$T/ready"
mkdir -p "$READY"
mkfifo "$READY/fifo"
STAGING="$HOME/.garuda/staging"

# The one-shot staging folders there are now (named sessions excluded).
folders() {
  local f
  for f in "$STAGING"/*-*-*; do
    [[ -d "$f" && "$f" != *-session-* ]] && basename "$f"
  done
}

# The command's sleep has this run's own length (the test's pid), so that the
# check that it is gone never finds the sleep of another run on the machine
# (two runs at once under --runs_per_test saw each other's).
SLEEPER="86399.$$"

# Starts a staged run in the background, in a process group of its own
# (job control on, so that SIGINT is not ignored as it is for a script's
# background jobs), and waits until its command runs. Sets PID. The run's
# command writes into the project, so the view has a change to lose.
start_run() {  # start_run BACKEND [stager flags...]
  local backend="$1"
  shift
  set -m
  "$STAGER" run --project "$P" --mode staged --backend "$backend" \
    --write "$READY" "$@" -- \
    sh -c "echo changed >src/f1.txt; echo up >$READY/fifo; exec sleep $SLEEPER" \
    >"$T/cs" 2>"$T/err" &
  PID=$!
  set +m
  local line=""
  # Opened read-write, so that the open itself never blocks.
  exec 3<>"$READY/fifo"
  read -r -t 30 -u 3 line
  exec 3<&-
  [[ "$line" == up ]] || {
    echo "  the command did not start within 30 s: $(cat "$T/err")" >&2
    return 1
  }
}

for backend in copy overlay; do
  for sig in TERM HUP INT; do
    for target in stager group; do
      what="$backend, SIG$sig to the $target"
      check "$what: no folder before" same "$(folders)" ""
      check "$what: the command runs" start_run "$backend"
      check "$what: a folder while it runs" contains "$(folders)" "-"
      if [[ $target == stager ]]; then kill -"$sig" "$PID"; else kill -"$sig" -- -"$PID"; fi
      wait "$PID"
      code=$?
      check "$what: ends by the signal" same "$code" "$((128 + $(kill -l "$sig")))"
      check "$what: its folder is removed" same "$(folders)" ""
      [[ -z "$(folders)" ]] || echo "  the stager said: $(cat "$T/err")" >&2
      check "$what: it says so" contains "$(cat "$T/err")" "the staging view was removed"
      check "$what: nothing listed" same "$(wc -c <"$T/cs")" 0
      check "$what: the project is unchanged" same "$(cat "$P/src/f1.txt")" "file 1"
      check "$what: the command is gone" same "$(pgrep -f "^sleep $SLEEPER\$" || true)" ""
    done
  done
done

# --out: the temporary the ChangeSet is written to never stays either.
check "--out: the command runs" start_run copy --out "$T/out.cs"
kill -TERM "$PID"
wait "$PID"
check "--out: its folder is removed" same "$(folders)" ""
check "--out: no temporary beside it" same "$(ls "$T" | grep -c 'out.cs' || true)" 0

# Negative control: SIGKILL cannot be caught, and the same run leaves its
# folder (the check above would see one that stays).
check "SIGKILL: the command runs" start_run copy
kill -KILL "$PID"
wait "$PID"
check "SIGKILL: the folder stays" contains "$(folders)" "-"
# The folder's lock is held by the run (the guard's child) and what it
# forked, which die of PR_SET_PDEATHSIG just after the guard: flock waits
# for them (a real wait, with a deadline).
left=$(folders)
check "SIGKILL: the run ends with its guard" timeout 30 flock "$STAGING/$left/lock" true
# The next start for the project, once the run is gone, removes it.
"$STAGER" run --project "$P" --mode staged --backend copy -- true >/dev/null 2>&1
check "SIGKILL: the next start removes it" same "$(folders)" ""

# A run that ends by itself still removes its folder and lists its change.
"$STAGER" run --project "$P" --mode staged --backend copy -- \
  sh -c 'echo changed >src/f1.txt' >"$T/cs" 2>"$T/err"
check "a normal run: exit 0" same "$?" 0
check "a normal run: listed" contains "$("$APPLIER" show --project "$P" <"$T/cs")" "src/f1.txt"
check "a normal run: no folder" same "$(folders)" ""

echo "$checks checks, $failures failures" >&2
[[ $failures -eq 0 ]]
