#!/usr/bin/env python3
"""Scores garuda-agent's find_references against a frozen oracle, beside a
naive whole-word search measured in the same run.

  tools/knowledge/measure.py AGENT ORACLE.json PROJECT [--misses]

Sites are unique path:line pairs, the queried declaration's line excluded
(the same rule as tests/knowledge). Precision and recall are micro-averaged
over all queries."""
import json
import os
import re
import subprocess
import sys


def naive(project, language, name):
    ext = (".java",) if language == "java" else (".py", ".pyi")
    word = re.compile(r"\b%s\b" % re.escape(name))
    sites = set()
    for folder, _, files in os.walk(project):
        for f in files:
            if not f.endswith(ext):
                continue
            path = os.path.join(folder, f)
            rel = os.path.relpath(path, project)
            with open(path, errors="replace") as handle:
                for number, line in enumerate(handle, 1):
                    if word.search(line):
                        sites.add("%s:%d" % (rel, number))
    return sites


def score(predicted, oracle):
    tp = len(predicted & oracle)
    return tp, len(predicted), len(oracle)


def main():
    agent, oracle_path, project = sys.argv[1:4]
    show = "--misses" in sys.argv
    extra = [a for a in sys.argv[4:] if a.startswith("--unknown_receivers")]
    with open(oracle_path) as f:
        oracle = json.load(f)
    queries = oracle["queries"]
    lines = "".join(json.dumps({"id": q["id"], "path": q["path"], "line": q["line"],
                                "column": q["column"]}) + "\n" for q in queries)
    out = subprocess.run([agent, "tool", "find_references", "--project", project,
                          "--batch", "-", "--nolsp", "--max_results", "100000"] + extra,
                         input=lines, capture_output=True, text=True, check=True)
    answers = {}
    for line in out.stdout.splitlines():
        answer = json.loads(line)
        answers[answer["id"]] = answer
    totals = {"ours": [0, 0, 0], "naive": [0, 0, 0]}
    for q in queries:
        truth = set(q["sites"])
        declaration = "%s:%d" % (q["path"], q["line"])
        ours = {"%s:%d" % (r["path"], r["line"]) for r in answers[q["id"]]["results"]} - {declaration}
        base = naive(project, oracle["language"], q["name"]) - {declaration}
        for key, predicted in (("ours", ours), ("naive", base)):
            for i, v in enumerate(score(predicted, truth)):
                totals[key][i] += v
        if show and ours != truth:
            print(q["id"], q["name"], "extra:", sorted(ours - truth), "missing:", sorted(truth - ours))
    for key, (tp, predicted, truth) in totals.items():
        precision = tp / predicted if predicted else 1.0
        recall = tp / truth if truth else 1.0
        print("%-6s precision %5.1f%% (%d/%d)  recall %5.1f%% (%d/%d)" % (
            key, 100 * precision, tp, predicted, 100 * recall, tp, truth))


if __name__ == "__main__":
    main()
