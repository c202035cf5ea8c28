#!/usr/bin/env python3
"""Picks declarations of a real project as find_references queries, for
measuring on repositories that are not in the tree.

  tools/knowledge/pick_queries.py PROJECT java|python COUNT > queries.json

Deterministic: every declaration of a method, function or class (dunder
methods skipped), sorted by path and line, then an even stride of COUNT."""
import json
import os
import re
import sys

PATTERNS = {
    "java": [re.compile(r"^\s*(?:(?:public|protected|private|static|final|abstract|synchronized|native|default)\s+)*(?:<[^>]+>\s+)?\w[\w.<>\[\]?, ]*?\s+(\w+)\s*\("),
             re.compile(r"^\s*(?:(?:public|protected|private|static|final|abstract)\s+)*(?:class|interface|enum|record)\s+(\w+)")],
    "python": [re.compile(r"^\s*(?:async\s+)?def\s+(\w+)"), re.compile(r"^\s*class\s+(\w+)")],
}
KEYWORDS = {"if", "for", "while", "switch", "catch", "return", "new", "synchronized", "else",
            "throw", "case", "assert", "yield", "await"}


def main():
    project, language, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    ext = ".java" if language == "java" else ".py"
    found = []
    for folder, dirs, files in os.walk(project):
        dirs.sort()
        for name in sorted(files):
            if not name.endswith(ext):
                continue
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, project)
            with open(path, errors="replace") as f:
                for number, line in enumerate(f, 1):
                    for pattern in PATTERNS[language]:
                        m = pattern.match(line)
                        if not m:
                            continue
                        word = m.group(1)
                        prefix_words = set(re.findall(r"\w+", line[:m.start(1)]))
                        if (word in KEYWORDS or word.startswith("__") or
                                prefix_words & KEYWORDS or "=" in line[:m.start(1)]):
                            break
                        column = len(line[:m.start(1)].encode()) + 1
                        found.append({"path": rel, "line": number, "column": column, "name": word})
                        break
    found.sort(key=lambda q: (q["path"], q["line"]))
    stride = max(1, len(found) // count)
    picked = found[::stride][:count]
    for i, q in enumerate(picked):
        q["id"] = "%s-%03d" % (language, i + 1)
    print(json.dumps({"language": language,
                      "queries": [{"id": q["id"], "path": q["path"], "line": q["line"],
                                   "column": q["column"], "name": q["name"]} for q in picked]},
                     indent=1))


if __name__ == "__main__":
    main()
