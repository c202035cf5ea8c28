#!/usr/bin/env bash
# Installs what is missing, builds, runs every test and ends with one line
# "N passed, N failed, N skipped" (test cases, counted from each target's
# test.xml by tools/test_summary.py; a target that failed to build or left no
# result counts as one failure; in CI a skipped negative control is a
# failure). Exits non-zero when anything failed.
set -uo pipefail
cd "$(dirname "$0")/.."

bash tools/setup.sh || { echo "0 passed, 1 failed, 0 skipped"; exit 1; }

events="$(mktemp)"
trap 'rm -f "$events"' EXIT
bazel test //... --keep_going --build_event_json_file="$events" "$@"
bazel_status=$?

python3 tools/test_summary.py "$events" "$bazel_status"
