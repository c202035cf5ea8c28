#!/usr/bin/env python3
"""Writes the queries.json of a hand-made fixture project from a short list
of `path:line:name` (one a line, `#` comments), the column being the
name's first whole-word occurrence on that line.

  tools/knowledge/hand_queries.py java|python PROJECT < list > queries.json

The hand-made fixtures (tests/data/knowledge/<name>/) each hold one class of
references that a rule of the index must get right; capture.py NAME freezes
their oracle like the generated fixtures'."""
import json
import os
import re
import sys


def main():
    language, project = sys.argv[1], sys.argv[2]
    queries = []
    for raw in sys.stdin:
        entry = raw.split("#", 1)[0].strip()
        if not entry:
            continue
        path, line, name = entry.split(":")
        with open(os.path.join(project, path)) as f:
            text = f.read().split("\n")[int(line) - 1]
        match = re.search(r"\b%s\b" % re.escape(name), text)
        if not match:
            raise SystemExit("%s:%s has no %s" % (path, line, name))
        queries.append({"id": "%s-%02d" % (language, len(queries) + 1), "path": path,
                        "line": int(line), "column": len(text[:match.start()].encode()) + 1,
                        "name": name})
    json.dump({"language": language, "queries": queries}, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
