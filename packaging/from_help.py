#!/usr/bin/env python3
"""Man pages and completion word lists from a Garuda program's own --help.

Every program's --help has one shape (lib/base/flags.cc ProgramHelp):

    PROGRAM: what it does (the first paragraph)
    <blank>
    more paragraphs, and the forms of the command line:
      PROGRAM run [--flag X] -- CMD      (two spaces: a form)
          what that form does             (six or more: its text)
    <blank>
    Flags:
      --flag (default VALUE)
          what the flag does
      -h, --help
          this text

so the page is built from that text alone, at package build time, and the
two cannot disagree. help2man was the other candidate: it expects GNU's
"  -x, --xxx   text" on one line and would have left our two-line flags and
our forms as unformatted paragraphs.

    from_help.py man PROGRAM VERSION DATE < help.txt > PROGRAM.1
    from_help.py flags < help.txt          every flag, one a line
    from_help.py value-flags < help.txt    those that take a value
    from_help.py subcommands PROGRAM < help.txt
    from_help.py words PROGRAM SUBCOMMAND < help.txt   the words after it
"""

import re
import sys


def parse(text):
    """(description paragraphs, forms [(synopsis, text)], flags [(name, default, text)])."""
    head, sep, flag_part = text.rpartition("\n\nFlags:\n")
    if not sep:
        raise SystemExit("from_help.py: no 'Flags:' section in the --help text")
    paragraphs, forms = [], []
    current = None  # the paragraph or form text being collected
    form = None
    for line in head.split("\n"):
        if not line.strip():
            current = form = None
            continue
        indent = len(line) - len(line.lstrip(" "))
        body = line.strip()
        if indent == 2:
            form = [body, []]
            forms.append(form)
            current = None
        elif indent >= 6 and form is not None:
            # A form's second line of flags ("--line L ...", "[--x=Y]")
            # before its text starts continues the form.
            if not form[1] and body[:1] in ("-", "["):
                form[0] += " " + body
            else:
                form[1].append(body)
        elif current is not None:
            current.append(body)
        else:
            current = [body]
            paragraphs.append(current)
            form = None
    flags = []
    for line in flag_part.split("\n"):
        if not line.strip():
            continue
        if line.startswith("  ") and not line.startswith("      "):
            match = re.match(r"\s+(\S.*?)(?: \(default (.*)\))?$", line)
            flags.append([match.group(1), match.group(2), []])
        elif flags:
            flags[-1][2].append(line.strip())
    return ([" ".join(p) for p in paragraphs],
            [(f, " ".join(t)) for f, t in forms],
            [(n, d, " ".join(t)) for n, d, t in flags])


def roff(text):
    """Text escaped for roff: backslashes, dashes as \\- (Debian's groff shows
    them as ASCII, so options copy and paste), no line starting with a
    control character."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return "\n".join(("\\&" + line) if line[:1] in (".", "'") else line
                     for line in text.split("\n"))


def bold(text):
    return "\\fB" + roff(text) + "\\fR"


def man(program, version, date, text):
    paragraphs, forms, flags = parse(text)
    first = paragraphs[0]
    prefix = program + ": "
    if first.startswith(prefix):
        first = first[len(prefix):]
    summary = first.rstrip(".")
    out = [
        '.\\" Generated from `%s --help` by packaging/from_help.py.' % program,
        '.TH %s 1 "%s" "garuda %s" "User Commands"' % (
            program.upper(), date, version),
        # Left-aligned and unhyphenated: a flag split at a line's end
        # would not copy and paste.
        ".nh",
        ".ad l",
        ".SH NAME",
        "%s \\- %s" % (roff(program), roff(summary)),
        ".SH SYNOPSIS",
    ]
    for i, (synopsis, _) in enumerate(forms):
        if i:
            out.append(".br")
        out.append(bold(synopsis))
    out.append(".SH DESCRIPTION")
    out.append(roff(first[:1].upper() + first[1:]))
    for paragraph in paragraphs[1:]:
        out += [".PP", roff(paragraph)]
    if forms:
        out.append(".SH COMMANDS")
        for synopsis, description in forms:
            out += [".TP", bold(synopsis), roff(description)]
    out.append(".SH OPTIONS")
    for name, default, description in flags:
        tag = bold(name)
        if default is not None:
            tag += " (default " + roff(default) + ")"
        out += [".TP", tag, roff(description)]
    out += [
        ".SH SEE ALSO",
        ", ".join(bold(other) + "(1)" for other in PROGRAMS if other != program),
        ".PP",
        "/usr/share/doc/garuda/README.md and /usr/share/doc/garuda/docs/",
    ]
    return "\n".join(out) + "\n"


PROGRAMS = ["garuda-agent", "garuda-stager", "garuda-applier",
            "garuda-auditor", "garuda-audit", "garuda-budgeter"]


def main(argv):
    text = sys.stdin.read()
    if len(argv) == 5 and argv[1] == "man":
        sys.stdout.write(man(argv[2], argv[3], argv[4], text))
    elif len(argv) == 2 and argv[1] in ("flags", "value-flags"):
        for name, default, _ in parse(text)[2]:
            if argv[1] == "value-flags" and default in ("true", "false"):
                continue
            for spelled in name.split(", "):
                if argv[1] == "value-flags" and spelled in (
                        "-h", "--help", "--version"):
                    continue
                print(spelled)
    elif len(argv) in (3, 4) and argv[1] in ("subcommands", "words"):
        # The lower-case word after `PROGRAM [SUBCOMMAND]` in each form
        # (find_references|callers|impact is three).
        lead = argv[2:]
        seen = []
        for synopsis, _ in parse(text)[1]:
            words = synopsis.split()
            if words[:len(lead)] != lead or len(words) <= len(lead):
                continue
            if re.match(r"^[a-z][a-z_|-]*$", words[len(lead)]):
                for word in words[len(lead)].split("|"):
                    if word not in seen:
                        seen.append(word)
        print("\n".join(seen))
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
