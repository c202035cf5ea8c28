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
