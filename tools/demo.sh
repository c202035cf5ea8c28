#!/usr/bin/env bash
# A short tour of the programs on a throw-away project: what the sandbox can
# do here, a command staged and shown as a change list, the change applied by
# the applier and undone, and the audit log verified. Everything it writes
# (the project and a HOME of its own) is in a temporary folder, removed at
# the end. Run it after `bazel build //cmd/...`.
set -euo pipefail
cd "$(dirname "$0")/.."
bin="$PWD/bazel-bin/cmd"
for program in garuda-stager garuda-applier garuda-auditor garuda-audit; do
  if [ ! -x "$bin/$program/$program" ]; then
    echo "demo: $bin/$program/$program is missing; run: bazel build //cmd/..." >&2
    exit 2
  fi
done
stager="$bin/garuda-stager/garuda-stager"
applier="$bin/garuda-applier/garuda-applier"

demo="$(mktemp -d)"
trap 'rm -rf "$demo"' EXIT
export HOME="$demo/home"
mkdir -p "$HOME" "$demo/project"
project="$demo/project"
printf 'hello, world\n' > "$project/hello.txt"
git -C "$project" init -q
git -C "$project" add hello.txt
git -C "$project" -c user.name=demo -c user.email=demo@localhost commit -qm start

step() { printf '\n== %s\n' "$*"; }

step "garuda-stager probe: what this machine's sandbox can do"
"$stager" probe || true

step "a command in the sandbox, staged: the project is read-only for it"
(cd "$project" && "$stager" run --mode staged -- sed -i 's/world/Garuda/' hello.txt) > "$demo/changes"

step "garuda-applier show: the change list as the question shows it"
"$applier" show --project "$project" < "$demo/changes"
echo "the project still says: $(cat "$project/hello.txt")"

step "garuda-applier apply --yes: the only program that writes the project"
"$applier" apply --project "$project" --yes < "$demo/changes"
echo "the project now says: $(cat "$project/hello.txt")"

step "garuda-applier undo: back to what it was"
undo_id="$("$applier" undo --project "$project" --list | awk 'NR==1 {print $1}')"
"$applier" undo --project "$project" "$undo_id"
echo "the project says again: $(cat "$project/hello.txt")"

step "the audit log: appended by garuda-auditor, checked by garuda-audit verify"
printf '{"kind":"command","tool":"bash","target":"sed -i s/world/Garuda/ hello.txt","decision":"applied"}\n' |
  "$bin/garuda-auditor/garuda-auditor" append --project "$project"
"$bin/garuda-audit/garuda-audit" verify --project "$project"
