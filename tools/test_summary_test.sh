#!/usr/bin/env bash
# tools/test_summary.py on a made-up build event file and two test.xml files
# in gtest's form: skipped cases are counted apart, and in CI (CI=true, root,
# bwrap) a skipped negative control is a failure. The control: the same
# files outside CI pass.
set -u
summary=$1
dir="${TEST_TMPDIR:-$(mktemp -d)}/summary"
mkdir -p "$dir"
cat > "$dir/a.xml" <<'XML'
<testsuites><testsuite name="A">
  <testcase name="Works" status="run" result="completed" classname="A"/>
  <testcase name="Fails" status="run" result="completed" classname="A"><failure message="x"/></testcase>
  <testcase name="NeedsKernel" status="run" result="skipped" classname="A"><skipped message="no"/></testcase>
</testsuite></testsuites>
XML
cat > "$dir/b.xml" <<'XML'
<testsuites><testsuite name="B">
  <testcase name="Works" status="run" result="completed" classname="B"/>
  <testcase name="NegativeControlWithoutTheWall" status="run" result="skipped" classname="B"><skipped message="no"/></testcase>
  <testcase name="Marked" status="run" result="skipped" classname="B" negative_control="true"><skipped/></testcase>
</testsuite></testsuites>
XML
event() {  # label status xml
  printf '{"id":{"testResult":{"label":"%s"}},"testResult":{"status":"%s","testActionOutput":[{"name":"test.xml","uri":"file://%s"}]}}\n' "$1" "$2" "$3"
}
{ event //a:t FAILED "$dir/a.xml"; event //b:t PASSED "$dir/b.xml"; } > "$dir/events"
{ event //b:t PASSED "$dir/b.xml"; } > "$dir/events_b"

fail=0
check() {  # what expected_last_line expected_status command...
  local what=$1 want=$2 want_status=$3
  shift 3
  out=$("$@")
  status=$?
  last=$(printf '%s\n' "$out" | tail -1)
  if [[ "$last" != "$want" || $status -ne $want_status ]]; then
    echo "FAIL $what: got '$last' (exit $status), want '$want' (exit $want_status)"
    printf '%s\n' "$out"
    fail=1
  else
    echo "ok $what: $last"
  fi
}

check "outside CI" "2 passed, 1 failed, 3 skipped" 1 env -u CI python3 "$summary" "$dir/events" 1
check "skips alone do not fail outside CI" "1 passed, 0 failed, 2 skipped" 0 env -u CI python3 "$summary" "$dir/events_b" 0
if [[ $(id -u) -eq 0 ]] && command -v bwrap >/dev/null; then
  check "CI: skipped negative controls fail" "1 passed, 2 failed, 0 skipped" 1 env CI=true python3 "$summary" "$dir/events_b" 0
else
  echo "not root with bubblewrap: the CI rule is not checked here"
fi
exit $fail
