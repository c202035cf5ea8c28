#!/usr/bin/env python3
"""Captures the reference oracles for tests/knowledge and freezes them in
tests/data/knowledge/<language>/oracle.json.

  tools/knowledge/capture.py [java|python|all|FIXTURE...]

FIXTURE is the name of another folder of tests/data/knowledge (a hand-made
project such as python-aliases, its queries.json written by
hand_queries.py); its language is the one its queries.json names.

Java: javac's compiler API (tools/knowledge/JavacOracle.java; needs a JDK).
Python: pyright over LSP (textDocument/references, the declaration
excluded), the version pinned in tools/knowledge/package.json and installed
with `npm ci` in tools/knowledge.

Each capture records a SHA-256 of the fixture sources, so the test fails
when the sources change without a new capture. A refresh is refused when
CI is set: the evidence is made on a developer's machine and reviewed."""
import hashlib
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
DATA = os.path.join(ROOT, "tests", "data", "knowledge")
EXTENSIONS = {"java": (".java",), "python": (".py", ".pyi")}


def fixture_hash(project, language):
    """SHA-256 over sorted `path NUL content NUL` of the language's sources
    (lib/knowledge's test computes the same)."""
    digest = hashlib.sha256()
    paths = []
    for folder, _, names in os.walk(project):
        for name in names:
            if name.endswith(EXTENSIONS[language]):
                paths.append(os.path.relpath(os.path.join(folder, name), project))
    for path in sorted(paths):
        digest.update(path.encode() + b"\0")
        with open(os.path.join(project, path), "rb") as f:
            digest.update(f.read() + b"\0")
    return digest.hexdigest()


def capture_java(project, queries_path):
    version = subprocess.run(["javac", "-version"], capture_output=True, text=True,
                             check=True)
    out = subprocess.run(
        ["java", "--add-exports", "jdk.compiler/com.sun.tools.javac.tree=ALL-UNNAMED",
         os.path.join(HERE, "JavacOracle.java"), project, queries_path],
        capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit("JavacOracle failed:\n" + out.stderr[-3000:])
    tool = ("%s compiler API (JavacTask, Trees.getElement over every identifier, "
            "member select, method reference and new; a call to a method that the "
            "queried method overrides, declared in the project, counts; identifiers javac inserts (implicit super(), an enum constant's type) do not)" % (version.stdout + version.stderr).strip())
    return tool, json.loads(out.stdout)


class Lsp:
    def __init__(self, command, cwd):
        self.process = subprocess.Popen(command, cwd=cwd, stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.next_id = 1

    def send(self, message):
        body = json.dumps(message).encode()
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def read(self):
        length = None
        while True:
            line = self.process.stdout.readline()
            if not line:
                raise SystemExit("the language server exited")
            line = line.strip()
            if not line:
                break
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        return json.loads(self.process.stdout.read(length))

    def request(self, method, params):
        ident = self.next_id
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
        while True:
            message = self.read()
            if "method" in message and "id" in message:
                result = None
                if message["method"] == "workspace/configuration":
                    result = [None] * len(message["params"]["items"])
                self.send({"jsonrpc": "2.0", "id": message["id"], "result": result})
            elif message.get("id") == ident:
                if "error" in message:
                    raise SystemExit("%s failed: %s" % (method, message["error"]))
                return message.get("result")

    def notify(self, method, params):
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def close(self):
        self.process.kill()
        self.process.wait()


def utf16_column(line_text, byte_column):
    prefix = line_text.encode()[:byte_column - 1].decode()
    return len(prefix.encode("utf-16-le")) // 2


def capture_python(project, queries_path):
    server = os.path.join(HERE, "node_modules", ".bin", "pyright-langserver")
    if not os.path.exists(server):
        raise SystemExit("pyright is not installed: run `npm ci` in " + HERE)
    with open(os.path.join(HERE, "package.json")) as f:
        version = json.load(f)["dependencies"]["pyright"]
    project = os.path.abspath(project)
    lsp = Lsp([server, "--stdio"], project)
    uri = "file://" + project
    lsp.request("initialize", {"processId": os.getpid(), "rootUri": uri,
                               "workspaceFolders": [{"uri": uri, "name": "fixture"}],
                               "capabilities": {"workspace": {"configuration": True}}})
    lsp.notify("initialized", {})
    with open(queries_path) as f:
        queries = json.load(f)["queries"]
    opened = set()
    passes = []
    # pyright finds the workspace's files in the background after
    # `initialized`: an early answer can miss other files. Ask every query
    # three times and keep the answer only when the last two agree.
    for _ in range(3):
        passes.append(ask_all(lsp, project, queries, opened))
    lsp.close()
    if passes[1] != passes[2]:
        raise SystemExit("pyright's answers did not settle; capture again")
    return "pyright %s over LSP (textDocument/references, includeDeclaration false)" % version, passes[2]


def ask_all(lsp, project, queries, opened):
    sites = {}
    for query in queries:
        path = os.path.join(project, query["path"])
        with open(path) as f:
            text = f.read()
        if path not in opened:
            lsp.notify("textDocument/didOpen", {"textDocument": {
                "uri": "file://" + path, "languageId": "python", "version": 1, "text": text}})
            opened.add(path)
        line_text = text.split("\n")[query["line"] - 1]
        result = lsp.request("textDocument/references", {
            "textDocument": {"uri": "file://" + path},
            "position": {"line": query["line"] - 1,
                         "character": utf16_column(line_text, query["column"])},
            "context": {"includeDeclaration": False}}) or []
        found = set()
        for location in result:
            target = location["uri"][len("file://"):]
            if not target.startswith(project + "/"):
                continue
            relative = target[len(project) + 1:]
            line = location["range"]["start"]["line"] + 1
            if relative == query["path"] and line == query["line"]:
                continue
            found.add("%s:%d" % (relative, line))
        sites[query["id"]] = sorted(found)
    return sites


def capture(fixture):
    folder = os.path.join(DATA, fixture)
    project = os.path.join(folder, "project")
    queries_path = os.path.join(folder, "queries.json")
    with open(queries_path) as f:
        loaded = json.load(f)
    queries = loaded["queries"]
    language = loaded.get("language", fixture)
    tool, sites = (capture_java if language == "java" else capture_python)(project, queries_path)
    records = []
    for query in queries:
        if query["id"] not in sites:
            raise SystemExit("the oracle gave no answer for " + query["id"])
        record = dict(query)
        record["sites"] = sorted(sites[query["id"]])
        records.append(record)
    oracle = {
        "language": language,
        "oracle": tool,
        "captured": time.strftime("%Y-%m-%d", time.gmtime()),
        "fixtureSha256": fixture_hash(project, language),
        "queries": records,
    }
    with open(os.path.join(folder, "oracle.json"), "w") as f:
        json.dump(oracle, f, indent=1)
        f.write("\n")
    print("%s: %d queries, %d sites" % (fixture, len(records),
                                        sum(len(r["sites"]) for r in records)))


def capture_elsewhere(language, project, queries_path, out_path):
    """For real repositories outside the tree: same capture, any paths."""
    with open(queries_path) as f:
        queries = json.load(f)["queries"]
    tool, sites = (capture_java if language == "java" else capture_python)(project, queries_path)
    # A query the oracle could not place (not a declaration) is dropped.
    queries = [q for q in queries if q["id"] in sites]
    for query in queries:
        query["sites"] = sorted(sites[query["id"]])
    with open(out_path, "w") as f:
        json.dump({"language": language, "oracle": tool,
                   "fixtureSha256": fixture_hash(project, language), "queries": queries}, f, indent=1)


def main():
    if len(sys.argv) == 6 and sys.argv[1] == "--elsewhere":
        capture_elsewhere(*sys.argv[2:])
        return
    if os.environ.get("CI"):
        print("capture.py: refusing to refresh the frozen oracle data while CI is set; "
              "capture on a developer machine and commit the result for review",
              file=sys.stderr)
        sys.exit(1)
    which = sys.argv[1:] or ["all"]
    for fixture in (["java", "python"] if which == ["all"] else which):
        capture(fixture)


if __name__ == "__main__":
    main()
