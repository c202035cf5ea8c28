#!/usr/bin/env bash
# A refresh of the frozen oracle data is refused when CI is set (the
# evidence is captured on a developer's machine and reviewed).
set -u
capture="$TEST_SRCDIR/garuda/tools/knowledge/capture.py"
output="$(CI=1 python3 "$capture" python 2>&1)"
status=$?
if [ "$status" -eq 0 ]; then
  echo "FAIL: capture.py ran with CI set"
  exit 1
fi
case "$output" in
  *"refusing to refresh"*) echo "ok: $output" ;;
  *) echo "FAIL: unexpected message: $output"; exit 1 ;;
esac
