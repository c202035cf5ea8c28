#!/usr/bin/env bash
# Installs what is missing, builds, runs every test and ends with one line
# "N passed, N failed" (test cases, counted from each target's test.xml; a
# target that failed to build or left no result counts as one failure).
# Exits non-zero when anything failed.
set -uo pipefail
cd "$(dirname "$0")/.."

bash tools/setup.sh || { echo "0 passed, 1 failed"; exit 1; }

events="$(mktemp)"
trap 'rm -f "$events"' EXIT
bazel test //... --keep_going --build_event_json_file="$events" "$@"
bazel_status=$?

python3 - "$events" "$bazel_status" <<'PY'
import json, os, sys
import xml.etree.ElementTree as ET

events_path, bazel_status = sys.argv[1], int(sys.argv[2])
results = {}  # label -> (status, path of test.xml or None)
for line in open(events_path):
    try:
        event = json.loads(line)
    except ValueError:
        continue
    ident = event.get("id", {})
    if "testResult" in ident:
        result = event.get("testResult", {})
        xml = None
        for output in result.get("testActionOutput", []):
            uri = output.get("uri", "")
            if output.get("name") == "test.xml" and uri.startswith("file://"):
                xml = uri[len("file://"):]
        results[ident["testResult"]["label"]] = (result.get("status", "FAILED"), xml)
    elif "testSummary" in ident:
        results.setdefault(ident["testSummary"]["label"], ("FAILED", None))

passed = failed = 0
for label, (status, xml) in sorted(results.items()):
    case_passed = case_failed = 0
    if xml and os.path.exists(xml):
        try:
            for case in ET.parse(xml).getroot().iter("testcase"):
                if case.find("failure") is not None or case.find("error") is not None:
                    case_failed += 1
                else:
                    case_passed += 1
        except ET.ParseError:
            pass
    if status != "PASSED":
        print(f"FAILED {label}: {status}")
        # A target that crashed or timed out after its cases passed still fails.
        case_failed = max(case_failed, 1)
    elif case_passed + case_failed == 0:
        case_passed = 1
    passed += case_passed
    failed += case_failed

if bazel_status != 0 and failed == 0:
    # The build failed, or no test ran: that is a failure too.
    print(f"FAILED bazel exited with status {bazel_status}")
    failed = 1
print(f"{passed} passed, {failed} failed")
sys.exit(0 if failed == 0 and bazel_status == 0 else 1)
PY
