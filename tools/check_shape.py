#!/usr/bin/env python3
"""Lists the source files and classes that break issue #26's shape rules.

Rules (both limits are options):
  * no non-test source file over 600 lines in cmd/, lib/ or sandbox/;
  * no class or struct with more than 15 member functions.

Which files: every .cc and .h file below cmd/, lib/ and sandbox/ except
*_test.cc files and anything under a folder named testing/.

How lines are counted: newline characters, as `wc -l` counts them.

How member functions are counted: every declaration (or inline definition)
of a member function written inside the class body, with each overload
counted on its own. That includes constructors, destructors, operators,
accessors, static member functions, virtual and pure virtual ones and
`= default` ones. Not counted: `= delete` declarations (nobody can call
them), friend declarations, data members (including std::function members
and function pointers), using/typedef lines, and the members of a nested
class, which is checked as a class of its own. Out-of-class definitions
(`void Foo::Bar() {...}` in a .cc file) are not counted again: the
declaration in the class body is what counts. Classes are found in headers
and in .cc files alike (also in anonymous namespaces and inside functions);
`enum class` is not a class.

The parse is textual (comments, strings and character literals removed,
braces matched); upper-case names followed by parentheses inside a
declaration, such as ABSL_GUARDED_BY(mu_), are taken for annotation macros.

Prints one line per finding and exits 1 when there is any, 0 when the tree
is clean.
"""

import argparse
import os
import re
import sys

SOURCE_DIRS = ("cmd", "lib", "sandbox")


def is_checked_file(rel_path):
    if not (rel_path.endswith(".cc") or rel_path.endswith(".h")):
        return False
    if rel_path.endswith("_test.cc"):
        return False
    return "testing" not in rel_path.split(os.sep)[:-1]


def strip_comments_and_literals(text):
    """Blanks comments and the insides of string/char literals; keeps newlines."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif c == "R" and text.startswith('R"', i) and (
                i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'R"([^()\\ ]{0,16})\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            end = text.find(")" + m.group(1) + '"', i + m.end())
            end = n if end < 0 else end + len(m.group(1)) + 2
            out.append('""' + "\n" * text.count("\n", i, end))
            i = end
        elif c in "\"'":
            # A digit separator (1'000) is not a literal.
            if c == "'" and i > 0 and text[i - 1].isalnum() and i + 1 < n and \
                    text[i + 1].isalnum() and text[i - 1].isdigit():
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def matching(text, open_index, opening="{", closing="}"):
    """The index of the bracket that closes the one at open_index (the end
    of the text when none does)."""
    depth = 0
    for i in range(open_index, len(text)):
        if text[i] == opening:
            depth += 1
        elif text[i] == closing:
            depth -= 1
            if depth == 0:
                return i
    return len(text)


def matching_brace(text, open_index):
    return min(matching(text, open_index), len(text) - 1)


CLASS_HEAD = re.compile(
    r"\b(class|struct|union)\s+(?:\[\[[^\]]*\]\]\s*)?([A-Za-z_]\w*(?:::\w+)*)\s*"
    r"(?:final\s*)?(?::[^;{}()]*)?\{")
MACRO_CALL = re.compile(r"\b[A-Z][A-Z0-9_]+\s*\(")
OPERATOR = re.compile(r"\boperator\s*(\(\)|\[\]|[^\w\s(]+|[\w:<>\s*&]+?(?=\())")
SKIP_STATEMENT = re.compile(
    r"^(friend|using|typedef|static_assert|template\s*<[^>]*>\s*(class|struct)|"
    r"class|struct|union|enum)\b")


def remove_macro_calls(statement):
    while True:
        m = MACRO_CALL.search(statement)
        if not m:
            return statement
        end = matching(statement, m.end() - 1, "(", ")")
        statement = statement[:m.start()] + " " + statement[end + 1:]


def strip_template_prefix(statement):
    s = statement.lstrip()
    while s.startswith("template"):
        k = s.find("<")
        end = matching(s, k, "<", ">") if k >= 0 else len(s)
        if end >= len(s):
            return s
        s = s[end + 1:].lstrip()
    return s


def function_name(statement):
    """The declared name when the statement declares a function, else None."""
    s = strip_template_prefix(statement)
    s = re.sub(r"\[\[.*?\]\]", " ", s)
    s = re.sub(r"\balignas\s*\([^)]*\)", " ", s)
    s = re.sub(r"\b(public|private|protected)\s*:", " ", s).strip()
    if not s or SKIP_STATEMENT.match(s):
        return None
    s = OPERATOR.sub("operator_", s)
    s = remove_macro_calls(s)
    angle = 0
    for i, c in enumerate(s):
        if c == "<":
            angle += 1
        elif c == ">":
            angle = max(0, angle - 1)
        elif angle == 0 and c in "={;":
            return None  # a data member with an initializer
        elif angle == 0 and c == "(":
            m = re.search(r"(~?\s*[A-Za-z_]\w*)\s*$", s[:i])
            if not m:
                return None
            inside = s[i + 1:].lstrip()
            if inside.startswith(("*", "&", "^")):
                return None  # a function pointer or reference data member
            if m.group(1) in ("decltype", "sizeof", "alignof", "noexcept"):
                return None
            return m.group(1).replace(" ", "")
    return None


def count_members(body):
    """Member function declarations at the top level of a class body."""
    names = []
    statement = []
    i, n = 0, len(body)
    while i < n:
        c = body[i]
        if c == "{":
            end = matching_brace(body, i)
            text = "".join(statement)
            name = function_name(text)
            if name is not None and not re.search(r"=\s*$", text):
                # A function body (or a brace in a constructor's initializer
                # list: then a comma or another brace follows).
                i = end + 1
                while i < n and body[i].isspace():
                    i += 1
                if i < n and body[i] in ",{":
                    statement.append(" init ")
                    continue
                names.append(name)
                statement = []
                continue
            statement.append(" {} ")
            i = end + 1
            continue
        if c == ";":
            text = "".join(statement)
            name = function_name(text)
            if name is not None and not re.search(r"=\s*delete\s*$", text):
                names.append(name)
            statement = []
        elif c == ":" and re.search(r"\b(public|private|protected)\s*$",
                                    "".join(statement)) and \
                not body.startswith("::", i):
            statement = []
        else:
            statement.append(c)
        i += 1
    return names


def classes(text):
    """Yields (name, line, member function names) for each class in text."""
    for m in CLASS_HEAD.finditer(text):
        before = text[max(0, m.start() - 20):m.start()]
        if re.search(r"\benum\s*$", before):
            continue
        open_index = m.end() - 1
        body = text[open_index + 1:matching_brace(text, open_index)]
        # Nested classes are counted on their own: blank them here.
        nested = []
        for inner in CLASS_HEAD.finditer(body):
            if nested and inner.start() < nested[-1][1]:
                continue
            inner_open = inner.end() - 1
            nested.append((inner_open, matching_brace(body, inner_open)))
        for start, end in reversed(nested):
            body = body[:start] + "{}" + body[end + 1:]
        yield m.group(2), text.count("\n", 0, m.start()) + 1, count_members(body)


def check(root, max_lines, max_members):
    findings = []
    for top in SOURCE_DIRS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames.sort()
            for filename in sorted(filenames):
                path = os.path.join(dirpath, filename)
                rel = os.path.relpath(path, root)
                if not is_checked_file(rel):
                    continue
                with open(path, encoding="utf-8", errors="replace") as f:
                    text = f.read()
                lines = text.count("\n")
                if lines > max_lines:
                    findings.append(
                        f"{rel}: {lines} lines (limit {max_lines}): split it by concern")
                for name, line, members in classes(
                        strip_comments_and_literals(text)):
                    if len(members) > max_members:
                        findings.append(
                            f"{rel}:{line}: class {name} has {len(members)} member "
                            f"functions (limit {max_members}): "
                            + ", ".join(members))
    return findings


def main():
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", default=None,
                        help="the repository (default: the folder above tools/)")
    parser.add_argument("--max-lines", type=int, default=600)
    parser.add_argument("--max-members", type=int, default=15)
    args = parser.parse_args()
    root = args.root or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if not all(os.path.isdir(os.path.join(root, d)) for d in SOURCE_DIRS):
        print(f"{root} has no {', '.join(SOURCE_DIRS)} folders: pass --root",
              file=sys.stderr)
        return 2
    findings = check(root, args.max_lines, args.max_members)
    for finding in findings:
        print(finding)
    print(f"{len(findings)} finding(s)" if findings else "shape: clean")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
