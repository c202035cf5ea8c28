#!/bin/bash
# The Debian package end to end: tools/package.sh builds it (twice: the
# bytes must be the same; a third time with another SOURCE_DATE_EPOCH, the
# control that shows the comparison sees a difference), lintian finds no
# error, and from the package unpacked into a folder (dpkg-deb -x, nothing
# installed on this machine) every program answers --version, every man
# page renders and names every flag of its program's --help, the bash
# completion offers flags, subcommands, session ids and job names,
# garuda-agent finds its helpers beside itself with no flag (and names one
# of another version or a missing one, the controls), a one-shot session
# against the scripted model server runs a command in the sandbox, a staged
# pipeline applies a change, and garuda-audit verify passes (and fails on a
# changed log, its control).
#
# The package is built from the programs this test suite built (--bin), not
# by a second, optimized build of everything: that would double CI's build
# time. tools/package.sh without --bin adds only `bazel build -c opt`.
#
# Usage (Bazel sets these): TEST_TMPDIR, TEST_SRCDIR. By hand:
#   TEST_TMPDIR=$(mktemp -d) RUNFILES=$PWD/bazel-bin/tests/package/package_test.runfiles/garuda \
#     tests/package/package_test.sh
set -u

RUNFILES="${RUNFILES:-${TEST_SRCDIR:-}/garuda}"
# $T, a private HOME, PATH, and check/fail/same/contains.
source "$RUNFILES/tests/staging/test_env.sh" package
mkdir -p "$T/home/.garuda" "$T/managed"
export GARUDA_MANAGED_POLICY_DIR="$T/managed"
VERSION="$(sed -n 's/.*kGarudaVersion\[\] = "\([^"]*\)";.*/\1/p' "$RUNFILES/lib/base/version.h")"
PROGRAMS=(garuda-agent garuda-stager garuda-applier garuda-auditor garuda-audit garuda-budgeter)

# The programs and the schema as tools/package.sh --bin expects them: the
# runfiles tree has both at the build's paths.
build() {  # build OUT [SOURCE_DATE_EPOCH]
  SOURCE_DATE_EPOCH="${2:-1700000000}" TMPDIR="$T" \
    bash "$RUNFILES/tools/package.sh" --bin "$RUNFILES" --out "$1" "${@:3}"
}

# --- 1. Reproducible: the same inputs give the same bytes.
phase() { echo "[$SECONDS s] $*" >&2; }
phase "1. builds"
build "$T/dist1" 1700000000 --lintian >"$T/build1.out" 2>"$T/build1.err"
check "package.sh with lintian exits 0" same "$?" 0
phase "first build with lintian done"
DEB="$T/dist1/garuda_${VERSION}_amd64.deb"
if [[ ! -f "$DEB" ]]; then
  cat "$T/build1.out" "$T/build1.err" >&2
  echo "FAIL no package; stopping" >&2
  exit 1
fi
check "lintian: no error" bash -c "! grep -q '^E: ' '$T/build1.out'"
build "$T/dist2" >/dev/null 2>"$T/build2.err"
check "the second build is byte for byte the first" cmp "$DEB" "$T/dist2/garuda_${VERSION}_amd64.deb"
build "$T/dist3" 1700086400 >/dev/null 2>&1
check "control: another SOURCE_DATE_EPOCH gives other bytes" \
  bash -c "! cmp -s '$DEB' '$T/dist3/garuda_${VERSION}_amd64.deb'"

phase "2. contents"
# --- 2. The package's files, and no maintainer scripts (nothing is written
#     at install time outside the package's own files).
ROOT="$T/root"
dpkg-deb -x "$DEB" "$ROOT"
mkdir -p "$T/control"
dpkg-deb -e "$DEB" "$T/control"
check "control files: control and md5sums only" same "$(ls "$T/control" | tr '\n' ' ')" "control md5sums "
check "everything under /usr" same "$(ls "$ROOT")" "usr"
control="$(cat "$T/control/control")"
check "Version from lib/base/version.h" contains "$control" "Version: $VERSION"
check "Depends from dpkg-shlibdeps" contains "$control" "libc6 (>= "
check "no bubblewrap: no backend runs bwrap" bash -c "! grep -q bubblewrap <<<'$(grep '^Depends' "$T/control/control")'"
for program in "${PROGRAMS[@]}"; do
  check "$program in /usr/bin" test -x "$ROOT/usr/bin/$program"
  check "$program.1.gz" test -f "$ROOT/usr/share/man/man1/$program.1.gz"
done
for file in usr/share/doc/garuda/copyright usr/share/doc/garuda/README.md \
  usr/share/doc/garuda/docs/sandbox.md usr/share/doc/garuda/docs/packaging.md \
  usr/share/garuda/settings.schema.json \
  usr/share/bash-completion/completions/garuda-agent; do
  check "$file" test -s "$ROOT/$file"
done
check "machine-readable copyright" contains "$(head -1 "$ROOT/usr/share/doc/garuda/copyright")" \
  "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/"
check "the schema is JSON" python3 -c "import json,sys; json.load(open(sys.argv[1]))" \
  "$ROOT/usr/share/garuda/settings.schema.json"

# From here the programs are the unpacked ones, by name, as the README's
# pipelines use them.
export PATH="$ROOT/usr/bin:/usr/bin:/bin"

phase "3. --version and man pages"
# --- 3. --version and the man pages.
for program in "${PROGRAMS[@]}"; do
  check "$program --version" same "$("$program" --version)" "$program $VERSION"
  page="$(MANWIDTH=200 man --warnings -l "$ROOT/usr/share/man/man1/$program.1.gz" 2>"$T/man.err")"
  check "man -l $program exits 0" same "$?" 0
  check "man -l $program: no groff warning" same "$(cat "$T/man.err")" ""
  check "man $program: NAME" contains "$page" "$program - "
  # Every flag of --help is on the page: the two cannot disagree.
  while read -r flag; do
    check "man $program names $flag" contains "$page" "$flag"
  done < <("$program" --help | sed -n '/^Flags:$/,$s/^  \(-[^ ,]*\).*/\1/p')
done

phase "4. completion"
# --- 4. Bash completion.
complete_words() {  # complete_words WORD... : what Tab offers for the last word
  (
    cd "${COMPLETE_IN:-$T}" || exit 1
    source "$ROOT/usr/share/bash-completion/completions/garuda-agent"
    COMP_WORDS=(garuda-agent "$@")
    COMP_CWORD=$#
    _garuda_agent
    printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' '
  )
}
mkdir -p "$HOME/.garuda/sessions/20260101-aaaa" "$HOME/.garuda/sessions/20260102-bbbb"
touch "$HOME/.garuda/sessions/20260101-aaaa/journal.jsonl" "$HOME/.garuda/sessions/20260102-bbbb/journal.jsonl"
mkdir -p "$T/jobs-project/.garuda/jobs"
touch "$T/jobs-project/.garuda/jobs/nightly-deps.json" "$T/jobs-project/.garuda/jobs/weekly.json"
check "completion: flags" same "$(complete_words --res)" "--resume "
check "completion: subcommands" same "$(complete_words "")" "acp acp-session jobs mcp run sessions tool "
check "completion: --resume session ids" same "$(complete_words --resume "")" "20260101-aaaa 20260102-bbbb "
check "completion: run job names" same "$(COMPLETE_IN="$T/jobs-project" complete_words run "")" "nightly-deps weekly "
check "completion: run job names of --project" \
  same "$(complete_words --project "$T/jobs-project" run n)" "nightly-deps "
check "completion: jobs timer" same "$(complete_words jobs "")" "timer "
check "completion: mcp operations" same "$(complete_words mcp "")" "check list "
check "completion: tool operations" same "$(complete_words tool "")" "callers find_references impact "
check "completion: --output-format" same "$(complete_words -p x --output-format "")" "json stream-json text "

phase "5. a one-shot session"
# --- 5. A one-shot session: garuda-agent finds its helpers beside itself
#     (no --helpers-dir) and runs a command in the sandbox.
PROVIDER="$RUNFILES/tests/providers/scripted_provider"
provider_pid=""
trap '[[ -n "$provider_pid" ]] && kill "$provider_pid" 2>/dev/null' EXIT
cat >"$T/script.json" <<'EOF'
{"replies": [
  {"text": "Looking.",
   "toolCalls": [{"id": "call_1", "name": "bash",
     "argumentsJson": "{\"command\": \"readlink /proc/self/ns/pid > ns.txt; echo ran\"}"}]},
  {"text": "Done."}
]}
EOF
"$PROVIDER" --kind=openai --script="$T/script.json" --port-file="$T/port" \
  >/dev/null 2>"$T/provider.err" &
provider_pid=$!
for _ in $(seq 100); do [[ -s "$T/port" ]] && break; sleep 0.1; done  # until it listens
P="$T/project"
mkdir -p "$P"
(cd "$P" && printf 'a\nb\n' >x.txt && git init -q && git add -A &&
  git -c user.name=t -c user.email=t@t commit -qm init)
agent() {  # agent PROGRAM: a one-shot session of PROGRAM in $P
  (cd "$P" && OPENAI_API_KEY=test "$1" -p "look" --output-format json --provider openai \
    --model scripted --base-url "http://127.0.0.1:$(cat "$T/port")/v1")
}
report="$(agent garuda-agent 2>"$T/agent.err")"
check "the session exits 0" same "$?" 0
check "the command ran" contains "$report" "ran"
check "it ran in the sandbox (its own PID namespace)" \
  bash -c "[[ -s '$P/ns.txt' && \"\$(cat '$P/ns.txt')\" != \"\$(readlink /proc/self/ns/pid)\" ]]"
check "the session's first lines name the sandbox" contains "$(cat "$T/agent.err")" "commands direct"

# Controls of the helper check: a helper of another version, and a missing
# one, are named with the fix, and the session does not start.
mkdir -p "$T/other"
cp -a "$ROOT/usr/bin/." "$T/other/"
printf '#!/bin/sh\necho garuda-budgeter 0.0.1\n' >"$T/other/garuda-budgeter"
agent "$T/other/garuda-agent" >/dev/null 2>"$T/other.err"
check "another version: the session fails" same "$?" 1
check "another version: named with both versions and the fix" contains "$(cat "$T/other.err")" \
  "$T/other/garuda-budgeter is version 0.0.1 but garuda-agent is $VERSION"
check "another version: the reinstall" contains "$(cat "$T/other.err")" \
  "apt-get install --reinstall ./garuda_${VERSION}_amd64.deb"
rm "$T/other/garuda-budgeter"
agent "$T/other/garuda-agent" >/dev/null 2>"$T/missing.err"
check "missing: named" contains "$(cat "$T/missing.err")" "garuda-budgeter is not in $T/other"

phase "6. staged pipeline"
# --- 6. A staged pipeline, by name, as the README writes it.
cd "$P" || exit 1
garuda-stager run --mode staged -- sed -i s/a/b/ x.txt 2>"$T/staged.err" |
  garuda-applier apply --yes >"$T/apply.out" 2>&1
check "staged | apply exits 0" same "${PIPESTATUS[*]}" "0 0"
check "the change is applied" same "$(cat x.txt)" $'b\nb'

phase "7. audit"
# --- 7. The audit log of the session verifies; a changed line does not.
garuda-audit verify --project "$P" >"$T/verify.out" 2>&1
check "garuda-audit verify exits 0" same "$?" 0
log="$(ls "$HOME"/.garuda/audit/*/*.jsonl 2>/dev/null | head -1)"
check "the session wrote an audit log" test -s "$log"
sed -i '1s/"kind":"[a-z_]*"/"kind":"forged"/' "$log"
garuda-audit verify --project "$P" >"$T/verify2.out" 2>&1
check "control: a changed log fails verify" same "$?" 1

phase "end"
echo "$checks checks, $failures failed" >&2
((failures == 0))
