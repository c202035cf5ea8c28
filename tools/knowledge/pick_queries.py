#!/usr/bin/env python3
"""Picks declarations of a real project as find_references queries, for
measuring on repositories that are not in the tree.

  tools/knowledge/pick_queries.py PROJECT java|python COUNT_PER_KIND [UNDER] > queries.json

With UNDER (a folder of PROJECT), only declarations in that folder are
picked (the project's other folders, such as its tests, are users only).

Each query has a `kind`: for Java class, method, constructor, field; for
Python function, class, method, constant. Declarations are found by line
patterns (independent of lib/knowledge, so the sample does not lean on
what our index sees): dunder names are skipped; a Java field needs an
access or `static` modifier (a local variable cannot have one); a Python
constant is an UPPER_CASE name bound at module level; a Python method is a
def whose nearest enclosing block is a class. Deterministic: sorted by
path and line, then an even stride of COUNT_PER_KIND per kind. The oracle
(capture.py) decides what is referenced; a query it cannot place is
dropped there."""
import json
import os
import re
import sys

MODIFIERS = r"(?:(?:public|protected|private|static|final|abstract|synchronized|native|default|transient|volatile|strictfp)\s+|@\w+(?:\([^)]*\))?\s+)*"
JAVA_TYPE = r"[\w.]+(?:<[^;=()]*>)?(?:\[\])*"
JAVA_METHOD = re.compile(r"^\s*" + MODIFIERS + r"(?:<[^>]+>\s+)?(?:" + JAVA_TYPE + r"\s+)?(\w+)\s*\(")
JAVA_CLASS = re.compile(r"^\s*" + MODIFIERS + r"(?:class|interface|enum|record|@interface)\s+(\w+)")
JAVA_FIELD = re.compile(r"^\s*((?:(?:public|protected|private|static|final|transient|volatile)\s+)+)" +
                        JAVA_TYPE + r"\s+(\w+)\s*(?:=|;)")
PY_DEF = re.compile(r"^(\s*)(?:async\s+)?def\s+(\w+)")
PY_CLASS = re.compile(r"^(\s*)class\s+(\w+)")
PY_CONSTANT = re.compile(r"^([A-Z][A-Z0-9_]*)\s*(?::[^=]+)?=[^=]")
KEYWORDS = {"if", "for", "while", "switch", "catch", "return", "new", "synchronized", "else",
            "throw", "case", "assert", "yield", "await", "super", "this", "try"}
KINDS = {"java": ["class", "method", "constructor", "field"],
         "python": ["function", "class", "method", "constant"]}


def column_of(line, start):
    return len(line[:start].encode()) + 1


def java_declarations(rel, lines):
    classes = set()
    for line in lines:
        m = JAVA_CLASS.match(line)
        if m:
            classes.add(m.group(1))
    found = []
    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        if stripped.startswith(("//", "*", "/*", "return", "throw")):
            continue
        m = JAVA_CLASS.match(line)
        if m:
            found.append(("class", number, column_of(line, m.start(1)), m.group(1)))
            continue
        m = JAVA_FIELD.match(line)
        if m and "(" not in line[:m.start(2)]:
            # `final` alone may be a local variable.
            if re.search(r"\b(public|protected|private|static)\b", m.group(1)):
                found.append(("field", number, column_of(line, m.start(2)), m.group(2)))
            continue
        m = JAVA_METHOD.match(line)
        if m:
            word = m.group(1)
            before = line[:m.start(1)]
            if word in KEYWORDS or set(re.findall(r"\w+", before)) & KEYWORDS or "=" in before:
                continue
            # A call statement (`foo(x);`) has no type or modifier before the
            # name and ends in `;`: not a declaration.
            if not before.strip() and stripped.endswith(";"):
                continue
            kind = "constructor" if word in classes else "method"
            found.append((kind, number, column_of(line, m.start(1)), word))
    return found


def python_declarations(rel, lines):
    found = []
    blocks = []  # (indent, "class" | "def")
    for number, line in enumerate(lines, 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        indent = len(line) - len(line.lstrip())
        while blocks and blocks[-1][0] >= indent:
            blocks.pop()
        m = PY_CLASS.match(line)
        if m:
            if not m.group(2).startswith("__"):
                found.append(("class", number, column_of(line, m.start(2)), m.group(2)))
            blocks.append((indent, "class"))
            continue
        m = PY_DEF.match(line)
        if m:
            name = m.group(2)
            inside = blocks[-1][1] if blocks else None
            kind = "function" if inside is None else "method" if inside == "class" else None
            if kind and not name.startswith("__"):
                found.append((kind, number, column_of(line, m.start(2)), name))
            blocks.append((indent, "def"))
            continue
        m = PY_CONSTANT.match(line)
        if m and not blocks and not m.group(1).startswith("__"):
            found.append(("constant", number, 1, m.group(1)))
    return found


def main():
    project, language, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    under = os.path.join(project, sys.argv[4]) if len(sys.argv) > 4 else project
    ext = ".java" if language == "java" else ".py"
    by_kind = {kind: [] for kind in KINDS[language]}
    for folder, dirs, files in os.walk(under):
        dirs.sort()
        for name in sorted(files):
            if not name.endswith(ext):
                continue
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, project)
            with open(path, errors="replace") as f:
                lines = f.read().split("\n")
            declarations = (java_declarations if language == "java" else python_declarations)(rel, lines)
            for kind, number, column, word in declarations:
                by_kind[kind].append({"path": rel, "line": number, "column": column,
                                      "name": word, "kind": kind})
    picked = []
    for kind in KINDS[language]:
        found = sorted(by_kind[kind], key=lambda q: (q["path"], q["line"]))
        stride = max(1, len(found) // count)
        picked.extend(found[::stride][:count])
    for i, q in enumerate(picked):
        q["id"] = "%s-%03d" % (language, i + 1)
    print(json.dumps({"language": language,
                      "queries": [{"id": q["id"], "path": q["path"], "line": q["line"],
                                   "column": q["column"], "name": q["name"], "kind": q["kind"]}
                                  for q in picked]},
                     indent=1))


if __name__ == "__main__":
    main()
