#!/bin/bash
# Staged commands, measured: for the overlay and the copy backend, the
# session start, the per-command overhead of `true` (staged minus direct)
# and the time to list a change of 1, 100 and 10 000 files, on a generated
# project of 20 000 files (about 79 MB). Beside them, in the same run, the
# spec's method with public tools (a plain copy, and git with separate index
# files: read-tree -m -u before each command, add -A and write-tree after),
# and the spec's recorded figures for reference.
#
#   bazel run -c opt //bench/staging:staging_bench [-- --runs N --iterations M
#       --backends "overlay copy" --keep --serve-only --one-shot-only]
#
# The per-command overhead is measured twice: through the CLI (one
# `garuda-stager run --session` process per command) and through
# `garuda-stager serve` (one process for the session, as garuda-agent runs
# it; bench/staging/serve_bench.cc). --serve-only skips everything else.
#
# The one-shot overhead (issue 32's goal: at most 20 ms): `garuda-stager run
# --mode staged -- true` with no session and the default backend (a new
# view, its probe, its removal: what a person's single staged command pays)
# minus `run --mode direct -- true`, over M interleaved pairs; --backends
# does not apply to it. --one-shot-only skips everything else.
#
# STAGER_BEFORE=/path/to/an/older/garuda-stager: the copy backend's
# per-command overhead of that binary too, interleaved with ours (before and
# after a change, in the same conditions), through the CLI and through
# serve; and its one-shot overhead, interleaved with ours.
#
# Every figure is the median of N runs (default 5); the per-command overhead
# is the median, over M iterations (default 30), of a staged call minus the
# direct call of the same command run just before it (the bare sandbox run,
# interleaved so that both see the same load). The project and a private
# HOME go in a temporary folder, removed at the end unless --keep.
set -u
RUNS=5
ITERATIONS=30
KEEP=0
SERVE_ONLY=0
ONE_SHOT_ONLY=0
BACKENDS="overlay copy"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --runs) RUNS="$2"; shift 2 ;;
    --iterations) ITERATIONS="$2"; shift 2 ;;
    --keep) KEEP=1; shift ;;
    --backends) BACKENDS="$2"; shift 2 ;;
    --serve-only) SERVE_ONLY=1; shift ;;
    --one-shot-only) ONE_SHOT_ONLY=1; shift ;;
    *) echo "usage: staging_bench [--runs N] [--iterations M] [--backends \"overlay copy\"] [--keep] [--serve-only | --one-shot-only]" >&2; exit 2 ;;
  esac
done

if [[ -n "${RUNFILES_DIR:-}" ]]; then R="$RUNFILES_DIR/garuda"
elif [[ -d "$0.runfiles/garuda" ]]; then R="$(cd "$0.runfiles/garuda" && pwd)"
else
  # Run as a plain script: the optimized build by its own path (bazel-bin
  # follows the workspace's last build, which may be unoptimized).
  R="$(cd "$(dirname "$0")/../.." && bazel info -c opt bazel-bin 2>/dev/null)"
fi
STAGER="${STAGER:-$R/cmd/garuda-stager/garuda-stager}"
[[ -x "$STAGER" ]] || { echo "no garuda-stager at $STAGER" >&2; exit 1; }
APPLIER="${APPLIER:-$R/cmd/garuda-applier/garuda-applier}"
SERVE_BENCH="${SERVE_BENCH:-$R/bench/staging/serve_bench}"

W=$(mktemp -d "${TMPDIR:-/tmp}/garuda-staging-bench-XXXXXX")
[[ $KEEP == 1 ]] || trap 'chmod -R u+rwx "$W" 2>/dev/null; rm -rf "$W"' EXIT
export HOME="$W/home"
mkdir -p "$HOME"
export PATH=/usr/bin:/bin
export GIT_CONFIG_NOSYSTEM=1
P="$W/project"

now() { echo "${EPOCHREALTIME/./}"; }  # microseconds
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
# time_ms CMD...: one run, in ms (3 decimals)
time_ms() {
  local t0 t1
  t0=$(now)
  "$@" >/dev/null 2>&1
  t1=$(now)
  awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.1f\n", (b - a) / 1000}'
}
# median_ms CMD...: the median of RUNS runs
median_ms() {
  local i
  for ((i = 0; i < RUNS; i++)); do time_ms "$@"; done | median
}
# phase NAME: from the stager's timings line on stdin, NAME's ms
phase() { grep -o "$1=[0-9.]*ms" | head -1 | tr -dc '0-9.'; }
fmt() { printf '  %-58s %10s ms\n' "$1" "$2"; }

echo "generating the project: 20 000 files in 200 folders, about 79 MB ($P)" >&2
python3 - "$P" <<'PY'
import os, random, sys
root = sys.argv[1]
rng = random.Random(20261010)
for d in range(200):
    folder = os.path.join(root, "d%03d" % d)
    os.makedirs(folder)
    for f in range(100):
        with open(os.path.join(folder, "f%03d.txt" % f), "w") as out:
            lines = []
            size = 0
            while size < 3950:
                line = "%08x %s\n" % (rng.getrandbits(32), "x" * rng.randint(10, 70))
                lines.append(line)
                size += len(line)
            out.write("".join(lines)[:3950])
PY
# No automatic gc: a background gc would change .git while it is measured.
(cd "$P" && printf 'build/\n' >.gitignore && git init -q &&
  git config gc.auto 0 && git add -A &&
  git -c user.name=b -c user.email=b@b commit -qm generated && git gc -q)
echo "  $(find "$P" -path "$P/.git" -prune -o -type f -print | wc -l) files," \
  "$(du -sm --exclude=.git "$P" | cut -f1) MB (without .git)" >&2
# The project's 79 MB written back before anything is timed: otherwise the
# first figures wait behind that writeback (a staged call's folders and
# mount are file system writes).
sync -f "$P"

# The command that changes K files (appends one line to each).
change_cmd() {
  echo "i=0; for f in d*/f*.txt; do [ \$i -ge $1 ] && break; echo changed >> \"\$f\"; i=\$((i+1)); done"
}

# The median of the numbers given as arguments.
median_of() { printf '%s\n' "$@" | median; }
# goal_line NAME MS GOAL_MS: the figure against its goal, as the other
# benches print theirs.
goal_line() {
  printf '  %-58s %10s    (goal: at most %s ms; %s)\n' "$1" \
    "$(awk -v a="$2" -v g="$3" 'BEGIN {printf "%.2fx", a / g}')" "$3" \
    "$(awk -v a="$2" -v g="$3" 'BEGIN {print (a <= g) ? "met" : "not met"}')"
}

# One-shot staged calls against direct ones: M rounds of direct, then ours
# and STAGER_BEFORE's (when given) in alternating order, each staged call's
# overhead taken against the direct call of its round.
one_shot() {
  # What the sections before wrote (the serve bench's copies) written back
  # first: a staged call makes and removes folders, a direct one does not,
  # so writeback left running would count against the staged side only.
  sync -f "$P"
  echo
  echo "Garuda one-shot staged commands (run --mode staged -- true: no session, the default backend)"
  echo "  load average at the start: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores; median of $ITERATIONS interleaved"
  echo "  the default backend here: $("$STAGER" run --mode staged -- true 2>&1 >/dev/null |
    sed -n 's/.*staged mode, \([a-z]*\) backend.*/\1/p' | head -1)"
  local directs=() stageds=() diffs=() befores=() before_diffs=() i d s b
  for ((i = 0; i < ITERATIONS; i++)); do
    d=$(time_ms "$STAGER" run --mode direct -- true)
    if [[ -n "${STAGER_BEFORE:-}" && $((i % 2)) == 1 ]]; then
      b=$(time_ms "$STAGER_BEFORE" run --mode staged -- true)
    fi
    s=$(time_ms "$STAGER" run --mode staged -- true)
    if [[ -n "${STAGER_BEFORE:-}" && $((i % 2)) == 0 ]]; then
      b=$(time_ms "$STAGER_BEFORE" run --mode staged -- true)
    fi
    directs+=("$d")
    stageds+=("$s")
    diffs+=("$(awk -v a="$s" -v b="$d" 'BEGIN {printf "%.1f", a - b}')")
    if [[ -n "${STAGER_BEFORE:-}" ]]; then
      befores+=("$b")
      before_diffs+=("$(awk -v a="$b" -v b="$d" 'BEGIN {printf "%.1f", a - b}')")
    fi
  done
  fmt "direct, garuda-stager run -- true" "$(median_of "${directs[@]}")"
  fmt "one-shot staged, garuda-stager run --mode staged -- true" "$(median_of "${stageds[@]}")"
  local overhead
  overhead=$(median_of "${diffs[@]}")
  fmt "one-shot overhead (staged minus direct, per round)" "$overhead"
  if [[ -n "${STAGER_BEFORE:-}" ]]; then
    fmt "  STAGER_BEFORE, one-shot staged (interleaved)" "$(median_of "${befores[@]}")"
    fmt "  STAGER_BEFORE, one-shot overhead" "$(median_of "${before_diffs[@]}")"
  fi
  goal_line "one-shot overhead against its goal" "$overhead" 20
  echo "  load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
}

cd "$P"
if [[ $ONE_SHOT_ONLY == 1 ]]; then
  one_shot
  exit 0
fi
echo
echo "Garuda staged commands through garuda-stager serve (one process per session, as garuda-agent runs it)"
echo "  load average at the start: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores; median of $ITERATIONS interleaved"
SERVE_BACKENDS="$BACKENDS"
[[ " $BACKENDS " == *" copy "* ]] && SERVE_BACKENDS="$BACKENDS copy-walk"
GARUDA_STAGER_TIMINGS=1 "$SERVE_BENCH" --stager "$STAGER" --project "$P" \
  --backends "$SERVE_BACKENDS" --iterations "$ITERATIONS" \
  ${STAGER_BEFORE:+--before "$STAGER_BEFORE"}
echo "  (copy: its watches say what changed; copy-walk: GARUDA_STAGER_WALK=1, both trees walked at each"
echo "   command; copy-before: STAGER_BEFORE's copy backend, when given)"
[[ $SERVE_ONLY == 1 ]] && exit 0
one_shot

echo
echo "Garuda staged commands (median of $RUNS runs; wall time of whole CLI calls unless said)"
echo "  load average at the start: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
for backend in $BACKENDS; do
  echo " backend $backend:"
  starts=()
  ends=()
  cps=()
  rms=()
  for ((i = 0; i < RUNS; i++)); do
    # The previous session's end (none before the first run), then the
    # start; for the copy, cp -a of the same tree right after, in the same
    # conditions (its previous copy removed just before, as ours was).
    e=$(time_ms "$STAGER" end --session bench)
    ((i > 0)) && ends+=("$e")
    starts+=("$(GARUDA_STAGER_TIMINGS=1 "$STAGER" run --mode staged --backend "$backend" \
      --session bench -- true 2>&1 >/dev/null | grep timings | phase start)")
    if [[ $backend == copy ]]; then
      rms+=("$(time_ms rm -rf "$W/start-copy")")
      cps+=("$(time_ms cp -a "$P" "$W/start-copy")")
    fi
  done
  rm -rf "$W/start-copy"
  fmt "session start (view made: the start phase)" "$(printf '%s\n' "${starts[@]}" | median)"
  if [[ $backend == copy ]]; then
    fmt "  cp -a of the project, interleaved with those starts" "$(printf '%s\n' "${cps[@]}" | median)"
  fi
  fmt "the previous session's end (garuda-stager end)" "$(printf '%s\n' "${ends[@]}" | median)"
  if [[ $backend == copy ]]; then
    fmt "  rm -rf of the cp -a copy, interleaved" "$(printf '%s\n' "${rms[@]}" | median)"
  fi
  directs=()
  stageds=()
  diffs=()
  views=()
  befores=()
  before_views=()
  compare=0
  if [[ $backend == copy && -n "${STAGER_BEFORE:-}" ]]; then
    compare=1
    "$STAGER_BEFORE" end --session bench-before >/dev/null 2>&1
    "$STAGER_BEFORE" run --mode staged --backend copy --session bench-before -- true >/dev/null 2>&1
  fi
  for ((i = 0; i < ITERATIONS; i++)); do
    d=$(time_ms "$STAGER" run --mode direct -- true)
    if [[ $compare == 1 ]]; then
      t0=$(now)
      line=$(GARUDA_STAGER_TIMINGS=1 "$STAGER_BEFORE" run --mode staged --backend copy \
        --session bench-before -- true 2>&1 >/dev/null | grep timings)
      t1=$(now)
      befores+=("$(awk -v a="$t0" -v b="$t1" -v d="$d" 'BEGIN {printf "%.1f\n", (b - a) / 1000 - d}')")
      before_views+=("$(awk -v r="$(phase refresh <<<"$line")" -v l="$(phase list <<<"$line")" \
        -v o="$(phase output <<<"$line")" 'BEGIN {printf "%.1f", r + l + o}')")
    fi
    t0=$(now)
    line=$(GARUDA_STAGER_TIMINGS=1 "$STAGER" run --mode staged --backend "$backend" \
      --session bench -- true 2>&1 >/dev/null | grep timings)
    t1=$(now)
    s=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.1f\n", (b - a) / 1000}')
    directs+=("$d")
    stageds+=("$s")
    diffs+=("$(awk -v a="$s" -v b="$d" 'BEGIN {printf "%.1f", a - b}')")
    views+=("$(awk -v r="$(phase refresh <<<"$line")" -v l="$(phase list <<<"$line")" \
      -v o="$(phase output <<<"$line")" 'BEGIN {printf "%.1f", r + l + o}')")
  done
  fmt "direct, garuda-stager run -- true ($ITERATIONS interleaved)" "$(printf '%s\n' "${directs[@]}" | median)"
  fmt "staged, garuda-stager run --session -- true" "$(printf '%s\n' "${stageds[@]}" | median)"
  fmt "per-command overhead of true (staged minus direct)" "$(printf '%s\n' "${diffs[@]}" | median)"
  fmt "  of which refresh + list + output (stager timings)" "$(printf '%s\n' "${views[@]}" | median)"
  if [[ $compare == 1 ]]; then
    fmt "  the same, STAGER_BEFORE (interleaved)" "$(printf '%s\n' "${befores[@]}" | median)"
    fmt "    of which refresh + list + output" "$(printf '%s\n' "${before_views[@]}" | median)"
    "$STAGER_BEFORE" end --session bench-before >/dev/null 2>&1
  fi
  for k in 1 100 10000; do
    lists=()
    totals=()
    for ((i = 0; i < RUNS; i++)); do
      line=$(GARUDA_STAGER_TIMINGS=1 "$STAGER" run --mode staged --backend "$backend" \
        --session bench -- sh -c "$(change_cmd $k)" 2>&1 >/dev/null | grep timings)
      lists+=("$(phase list <<<"$line")")
      totals+=("$(awk -v l="$(phase list <<<"$line")" -v o="$(phase output <<<"$line")" \
        -v r="$(phase refresh <<<"$line")" 'BEGIN {printf "%.1f", l + o + r}')")
    done
    fmt "list a change of $k files (walk and fingerprints)" "$(printf '%s\n' "${lists[@]}" | median)"
    fmt "  with the ChangeSet written and the next refresh" "$(printf '%s\n' "${totals[@]}" | median)"
  done
  "$STAGER" end --session bench >/dev/null 2>&1
done

echo
echo "The floor: one walk of the project with public tools (no copy, no list)"
fmt "find -printf of size, times and inode of every path" \
  "$(median_ms find "$P" -printf '%s %T@ %C@ %i\n')"
fmt "git status --porcelain in the project, no change" \
  "$(median_ms git -C "$P" status --porcelain)"
echo
echo "The spec's method with public tools, same machine, same run"
C="$W/copy"
S="$W/store.git"
# The copy and the first trees take seconds each: measured once.
rm -rf "$C"
fmt "plain copy (cp -a), one run" "$(time_ms cp -a "$P" "$C")"
ref_start() {
  rm -rf "$C" "$S"
  cp -a "$P" "$C" && git init -q --bare "$S" &&
    GIT_DIR="$S" GIT_WORK_TREE="$P" GIT_INDEX_FILE="$S/index.project" git add -A &&
    GIT_DIR="$S" GIT_WORK_TREE="$P" GIT_INDEX_FILE="$S/index.project" git write-tree >"$S/project-tree" &&
    GIT_DIR="$S" GIT_WORK_TREE="$C" GIT_INDEX_FILE="$S/index.copy" git add -A &&
    GIT_DIR="$S" GIT_WORK_TREE="$C" GIT_INDEX_FILE="$S/index.copy" git write-tree >/dev/null
}
ref_before() {
  GIT_DIR="$S" GIT_WORK_TREE="$P" GIT_INDEX_FILE="$S/index.project" git add -A &&
    GIT_DIR="$S" GIT_WORK_TREE="$P" GIT_INDEX_FILE="$S/index.project" git write-tree >"$S/project-tree" &&
    GIT_DIR="$S" GIT_WORK_TREE="$C" GIT_INDEX_FILE="$S/index.copy" git read-tree -m -u "$(cat "$S/project-tree")"
}
ref_after() {
  GIT_DIR="$S" GIT_WORK_TREE="$C" GIT_INDEX_FILE="$S/index.copy" git add -A &&
    tree=$(GIT_DIR="$S" GIT_WORK_TREE="$C" GIT_INDEX_FILE="$S/index.copy" git write-tree) &&
    GIT_DIR="$S" git diff-tree -r --name-status "$(cat "$S/project-tree")" "$tree"
}
fmt "session start (copy, both first trees), one run" "$(time_ms ref_start)"
fmt "before each command (add -A, write-tree, read-tree -m -u)" "$(median_ms ref_before)"
fmt "after each command (add -A, write-tree, diff-tree)" "$(median_ms ref_after)"
for k in 1 100 10000; do
  afters=()
  statuses=()
  for ((i = 0; i < RUNS; i++)); do
    ref_before >/dev/null 2>&1
    (cd "$C" && sh -c "$(change_cmd $k)")
    afters+=("$(time_ms ref_after)")
    statuses+=("$(time_ms git -C "$C" status --porcelain)")
  done
  fmt "after a change of $k files" "$(printf '%s\n' "${afters[@]}" | median)"
  fmt "  git status --porcelain in the copy, same change" "$(printf '%s\n' "${statuses[@]}" | median)"
done

echo
echo "The spec's recorded figures (Linux, ext4, no reflink; another machine)"
fmt "plain copy" 400
fmt "session start with both first trees" 3000
fmt "before each command" 100
fmt "after each command" 80
echo
echo "Targets: overlay start <= 100 ms, overhead <= 20 ms; copy start <= 1000 ms, overhead <= 60 ms (per CLI call, the first staging issue). Issue 32: per command in a session overlay <= 2 ms and copy <= 5 ms, one-shot <= 20 ms (each beside its row above)."
