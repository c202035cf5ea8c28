# Sourced by the staged-mode tests with one argument, the test's folder
# name: the programs under test (from Bazel's runfiles, or STAGER and
# APPLIER), and $T, a fresh folder in $TEST_TMPDIR with a private HOME.
RUNFILES="${TEST_SRCDIR:-}/garuda"
STAGER="${STAGER:-$RUNFILES/cmd/garuda-stager/garuda-stager}"
APPLIER="${APPLIER:-$RUNFILES/cmd/garuda-applier/garuda-applier}"
T="$TEST_TMPDIR/$1"
rm -rf "$T"
mkdir -p "$T/home"
export HOME="$T/home"
# Inside the sandbox only system folders exist: a PATH that holds them.
export PATH=/usr/bin:/bin
export GIT_CONFIG_NOSYSTEM=1

# The checks every staged-mode test uses: `check "what" COMMAND...` counts
# and reports a failure (with [$BACKEND] when set) without stopping.
failures=0
checks=0
fail() {
  echo "FAIL ${BACKEND:+[$BACKEND] }$*" >&2
  failures=$((failures + 1))
}
check() {
  local what="$1"
  shift
  checks=$((checks + 1))
  if ! "$@"; then fail "$what"; fi
}
same() { [[ "$1" == "$2" ]] || { echo "  got: $(printf %q "$1")  want: $(printf %q "$2")" >&2; return 1; }; }
contains() { [[ "$1" == *"$2"* ]] || { echo "  $(printf %q "$2") not in: $1" >&2; return 1; }; }
absent() { [[ ! -e "$1" && ! -L "$1" ]]; }
