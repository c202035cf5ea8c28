#!/usr/bin/env python3
"""Measures lib/knowledge's find_references on the real repositories of
tools/knowledge/repos.json against compiler-grade oracles (javac's compiler
API, pyright over LSP), per language and per kind, with 95% Wilson
intervals.

  tools/knowledge/real_repos.py prepare [--mirror DIR] [NAME...]
      clone each repository at its commit into $GARUDA_REPOS (default
      /tmp/garuda-knowledge-repos) and lay out the indexed project
  tools/knowledge/real_repos.py capture [NAME...]
      pick the queries (pick_queries.py, perKind per kind) and capture the
      oracle into tools/knowledge/oracles/NAME.json (refused when CI is set)
  tools/knowledge/real_repos.py measure AGENT [NAME...] [--misses] [--markdown]
      score bazel-bin/cmd/garuda-agent/garuda-agent against the oracles

Sites are unique path:line pairs, the queried declaration's line excluded,
micro-averaged. The interval treats sites as independent draws; sites of
one query are not, so the intervals are narrower than the truth."""
import json
import math
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import capture  # noqa: E402
import measure  # noqa: E402

WORK = os.environ.get("GARUDA_REPOS", "/tmp/garuda-knowledge-repos")
ORACLES = os.path.join(HERE, "oracles")


def load():
    with open(os.path.join(HERE, "repos.json")) as f:
        return json.load(f)


def selected(config, names):
    repos = config["repos"]
    if names:
        unknown = set(names) - {r["name"] for r in repos}
        if unknown:
            raise SystemExit("unknown repositories: " + ", ".join(sorted(unknown)))
        repos = [r for r in repos if r["name"] in names]
    return repos


def project_dir(repo):
    return os.path.join(WORK, repo["name"], "project")


def prepare(repo, mirror):
    base = os.path.join(WORK, repo["name"])
    clone = os.path.join(base, "clone")
    if not os.path.isdir(clone):
        os.makedirs(base, exist_ok=True)
        source = repo["url"]
        if mirror:
            # A local mirror named owner+name/repo (the search tool's fetch).
            owner_name = repo["url"].rstrip("/").split("/")[-2:]
            source = os.path.join(mirror, "+".join(owner_name), "repo")
        subprocess.run(["git", "clone", "-q", source, clone], check=True)
    subprocess.run(["git", "-C", clone, "checkout", "-q", repo["commit"]], check=True)
    project = project_dir(repo)
    if os.path.exists(project):
        shutil.rmtree(project)
    root = os.path.join(clone, repo["root"])
    if repo["language"] == "python":
        os.makedirs(project)
        shutil.copytree(os.path.join(root, repo["package"]),
                        os.path.join(project, repo["package"]))
        # `users`: folders of the clone (its tests) copied beside the
        # package, so that the package's public names are used the way its
        # users write them (`import pkg; pkg.name`); no query is picked there.
        for folder in repo.get("users", []):
            shutil.copytree(os.path.join(clone, folder),
                            os.path.join(project, os.path.basename(folder)))
    else:
        shutil.copytree(root, project)
    print("%s: %s" % (repo["name"], project))


def capture_repo(repo, per_kind):
    if os.environ.get("CI"):
        raise SystemExit("real_repos.py: refusing to capture oracles while CI is set")
    project = project_dir(repo)
    queries = os.path.join(WORK, repo["name"], "queries.json")
    with open(queries, "w") as f:
        under = [repo["package"]] if repo.get("users") else []
        subprocess.run([sys.executable, os.path.join(HERE, "pick_queries.py"), project,
                        repo["language"], str(per_kind)] + under, stdout=f, check=True)
    os.environ["ORACLE_ALLOW_ERRORS"] = "1"
    os.makedirs(ORACLES, exist_ok=True)
    out = os.path.join(ORACLES, repo["name"] + ".json")
    capture.capture_elsewhere(repo["language"], project, queries, out)
    with open(out) as f:
        oracle = json.load(f)
    oracle = {"repository": repo["url"], "commit": repo["commit"], "root": repo["root"],
              "captured": capture.time.strftime("%Y-%m-%d", capture.time.gmtime()), **oracle}
    with open(out, "w") as f:
        json.dump(oracle, f, indent=1)
        f.write("\n")
    print("%s: %d queries, %d sites" % (repo["name"], len(oracle["queries"]),
                                        sum(len(q["sites"]) for q in oracle["queries"])))


def wilson(successes, total, z=1.96):
    if total == 0:
        return (1.0, 1.0, 1.0)
    p = successes / total
    denominator = 1 + z * z / total
    centre = (p + z * z / (2 * total)) / denominator
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / denominator
    return (p, max(0.0, centre - half), min(1.0, centre + half))


def ask(agent, project, queries):
    lines = "".join(json.dumps({"id": q["id"], "path": q["path"], "line": q["line"],
                                "column": q["column"]}) + "\n" for q in queries)
    out = subprocess.run([agent, "tool", "find_references", "--project", project,
                          "--batch", "-", "--nolsp", "--max_results", "100000"],
                         input=lines, capture_output=True, text=True, check=True)
    return {a["id"]: a for a in map(json.loads, out.stdout.splitlines())}


class Tally:
    def __init__(self):
        self.tp = self.predicted = self.truth = self.queries = 0

    def add(self, ours, truth):
        self.tp += len(ours & truth)
        self.predicted += len(ours)
        self.truth += len(truth)
        self.queries += 1

    def figures(self):
        return wilson(self.tp, self.predicted), wilson(self.tp, self.truth)


def cell(figure):
    p, low, high = figure
    return "%.3f [%.3f, %.3f]" % (p, low, high)


def measure_all(agent, repos, misses, markdown):
    by_repo, by_language, by_kind = {}, {}, {}
    naive_by_language = {}
    for repo in repos:
        path = os.path.join(ORACLES, repo["name"] + ".json")
        if not os.path.exists(path):
            raise SystemExit("no oracle for %s: run `capture %s`" % (repo["name"], repo["name"]))
        with open(path) as f:
            oracle = json.load(f)
        project = project_dir(repo)
        if capture.fixture_hash(project, repo["language"]) != oracle["fixtureSha256"]:
            raise SystemExit("%s: the sources differ from the captured ones (prepare again)" %
                             repo["name"])
        answers = ask(agent, project, oracle["queries"])
        language = repo["language"]
        for q in oracle["queries"]:
            truth = set(q["sites"])
            declaration = "%s:%d" % (q["path"], q["line"])
            ours = {"%s:%d" % (r["path"], r["line"]) for r in answers[q["id"]]["results"]}
            ours -= {declaration}
            naive = measure.naive(project, language, q["name"]) - {declaration}
            for tally in (by_repo.setdefault(repo["name"], Tally()),
                          by_language.setdefault(language, Tally()),
                          by_kind.setdefault((language, q.get("kind", "?")), Tally())):
                tally.add(ours, truth)
            naive_by_language.setdefault(language, Tally()).add(naive, truth)
            if misses and ours != truth:
                print("%s %s %s %s extra: %s missing: %s" % (
                    repo["name"], q["id"], q.get("kind"), q["name"], sorted(ours - truth),
                    sorted(truth - ours)))
    rows = []
    for name, tally in by_repo.items():
        rows.append((name, tally))
    for language, tally in by_language.items():
        rows.append(("%s (all)" % language, tally))
        rows.append(("%s whole-word search" % language, naive_by_language[language]))
    for (language, kind), tally in sorted(by_kind.items()):
        rows.append(("%s %s" % (language, kind), tally))
    if markdown:
        print("| | queries | sites | precision [95%] | recall [95%] |")
        print("| --- | --- | --- | --- | --- |")
    for name, tally in rows:
        precision, recall = tally.figures()
        if markdown:
            print("| %s | %d | %d | %s | %s |" % (name, tally.queries, tally.truth, cell(precision),
                                                  cell(recall)))
        else:
            print("%-28s queries %4d sites %5d  precision %s  recall %s" % (
                name, tally.queries, tally.truth, cell(precision), cell(recall)))


def main():
    args = sys.argv[1:]
    if not args:
        raise SystemExit(__doc__)
    config = load()
    command = args.pop(0)
    if command == "prepare":
        mirror = None
        if args[:1] == ["--mirror"]:
            mirror = args[1]
            args = args[2:]
        for repo in selected(config, args):
            prepare(repo, mirror)
    elif command == "capture":
        for repo in selected(config, args):
            capture_repo(repo, config["perKind"])
    elif command == "measure":
        agent = args.pop(0)
        flags = [a for a in args if a.startswith("--")]
        names = [a for a in args if not a.startswith("--")]
        measure_all(agent, selected(config, names), "--misses" in flags, "--markdown" in flags)
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
