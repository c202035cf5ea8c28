#!/usr/bin/env python3
"""The last line of tools/test.sh: "N passed, N failed, N skipped".

test_summary.py EVENTS BAZEL_STATUS reads Bazel's build event JSON file and
each test target's test.xml, counts test cases, and exits non-zero when
anything failed. A target that failed to build or left no result counts as
one failure.

A skipped case (gtest's GTEST_SKIP: result="skipped" or a <skipped/>
element) is counted apart. In CI (the environment has CI=true, the tests run
as root and bubblewrap is installed, so every security test can run) a
skipped negative control is a failure: a security test whose control did not
run proves nothing. A case is a negative control when its name contains
"NegativeControl" or it records the property negative_control
(RecordProperty("negative_control", "true")); see docs/lockdown.md,
"Negative controls".
"""
import json
import os
import shutil
import sys
import xml.etree.ElementTree as ET


def strict_ci():
    return (os.environ.get("CI") == "true" and os.geteuid() == 0
            and shutil.which("bwrap") is not None)


def is_skipped(case):
    return (case.get("result") in ("skipped", "suppressed")
            or case.get("status") == "notrun"
            or case.find("skipped") is not None)


def is_negative_control(case):
    if "NegativeControl" in case.get("name", ""):
        return True
    if case.get("negative_control") not in (None, "", "false", "0"):
        return True
    for prop in case.iter("property"):
        if prop.get("name") == "negative_control" and prop.get("value") not in (
                "", "false", "0"):
            return True
    return False


def read_results(events_path):
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
            results[ident["testResult"]["label"]] = (
                result.get("status", "FAILED"), xml)
        elif "testSummary" in ident:
            results.setdefault(ident["testSummary"]["label"], ("FAILED", None))
    return results


def main(events_path, bazel_status):
    strict = strict_ci()
    passed = failed = skipped = 0
    for label, (status, xml) in sorted(read_results(events_path).items()):
        case_passed = case_failed = case_skipped = 0
        if xml and os.path.exists(xml):
            try:
                for case in ET.parse(xml).getroot().iter("testcase"):
                    name = f"{case.get('classname', '')}.{case.get('name', '')}"
                    if (case.find("failure") is not None
                            or case.find("error") is not None):
                        case_failed += 1
                    elif is_skipped(case):
                        if strict and is_negative_control(case):
                            print(f"FAILED {label}: {name}: a negative control "
                                  "was skipped in CI (root, bubblewrap): it "
                                  "must run there")
                            case_failed += 1
                        else:
                            print(f"SKIPPED {label}: {name}")
                            case_skipped += 1
                    else:
                        case_passed += 1
            except ET.ParseError:
                pass
        if status != "PASSED":
            print(f"FAILED {label}: {status}")
            # A target that crashed or timed out after its cases passed still
            # fails.
            case_failed = max(case_failed, 1)
        elif case_passed + case_failed + case_skipped == 0:
            case_passed = 1
        passed += case_passed
        failed += case_failed
        skipped += case_skipped

    if bazel_status != 0 and failed == 0:
        # The build failed, or no test ran: that is a failure too.
        print(f"FAILED bazel exited with status {bazel_status}")
        failed = 1
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    return 0 if failed == 0 and bazel_status == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], int(sys.argv[2])))
