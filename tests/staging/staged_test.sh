#!/bin/bash
# Staged commands end to end: garuda-stager run --mode staged and
# garuda-applier, for the overlay and the copy backend. Each check that
# proves a protection has its negative control (the same command in direct
# mode, or without the protecting step, does the bad thing).
#
# Usage (Bazel sets these): TEST_TMPDIR, TEST_SRCDIR. Run by hand:
#   TEST_TMPDIR=$(mktemp -d) STAGER=... APPLIER=... tests/staging/staged_test.sh
set -u

source "$(dirname "$0")/test_env.sh" staged

BACKEND=""

n=0
# A fresh project: x.txt ("a\nb\n"), y.txt, a git repository that ignores
# build/ and .venv/, one commit.
new_project() {
  n=$((n + 1))
  P="$T/project-$BACKEND-$n"
  mkdir -p "$P"
  (
    cd "$P" &&
      printf 'a\nb\n' >x.txt &&
      echo keep >y.txt &&
      printf 'build/\n.venv/\n' >.gitignore &&
      git init -q &&
      git add -A &&
      git -c user.name=t -c user.email=t@t commit -qm init
  )
  cd "$P" || exit 1
}

staged() {  # staged [stager flags...] -- CMD...; ChangeSet on stdout
  "$STAGER" run --mode staged --backend "$BACKEND" "$@"
}

run_backend() {
  BACKEND="$1"
  echo "=== backend $BACKEND" >&2

  # --- Discard leaves the project unchanged; direct mode changes it.
  new_project
  staged -- sed -i s/a/Z/ x.txt >"$T/cs" 2>"$T/err"
  check "sed -i exit code" same "$?" 0
  check "first line names the backend" \
    contains "$(head -1 "$T/err")" "staged mode, $BACKEND backend"
  check "the ChangeSet lists x.txt" contains "$("$APPLIER" show <"$T/cs")" "M x.txt"
  check "discard: project unchanged" same "$(cat x.txt)" $'a\nb'
  check "one-shot staging folder removed" same "$(ls "$HOME/.garuda/staging")" ""
  "$STAGER" run --mode direct -- sed -i s/a/Z/ x.txt 2>/dev/null
  check "negative control: direct mode changes the project" same "$(cat x.txt)" $'Z\nb'

  # --- Apply through a pipeline; undo restores.
  new_project
  staged -- sed -i s/a/b/ x.txt 2>/dev/null | "$APPLIER" apply --yes >"$T/out" 2>/dev/null
  check "pipeline apply exit code" same "${PIPESTATUS[1]}" 0
  check "apply: new content" same "$(cat x.txt)" $'b\nb'
  check "apply: the line for the model" contains "$(cat "$T/out")" "The user applied the changes"
  id=$("$APPLIER" undo --project "$P" --list 2>/dev/null | head -1 | cut -d' ' -f1)
  "$APPLIER" undo --project "$P" "$id" >/dev/null 2>&1
  check "undo restores" same "$(cat x.txt)" $'a\nb'

  # --- A write to the project's absolute path never reaches the project.
  new_project
  staged -- sh -c "echo evil > '$P/abs.txt'; echo more >> '$P/y.txt'" >"$T/cs" 2>/dev/null
  check "absolute path: project has no abs.txt" absent "$P/abs.txt"
  check "absolute path: y.txt unchanged" same "$(cat y.txt)" keep
  shown=$("$APPLIER" show <"$T/cs")
  check "absolute path: the write is in the staged list" contains "$shown" "A abs.txt"
  "$STAGER" run --mode direct -- sh -c "echo evil > '$P/abs.txt'" 2>/dev/null
  check "negative control: direct mode writes the absolute path" test -e "$P/abs.txt"

  # --- A deletion is listed and applied.
  new_project
  staged -- rm y.txt >"$T/cs" 2>/dev/null
  check "deletion listed" contains "$("$APPLIER" show <"$T/cs")" "D y.txt"
  check "deletion not applied before apply" test -e y.txt
  "$APPLIER" apply --yes <"$T/cs" >/dev/null 2>&1
  check "deletion applied" absent y.txt

  # --- A command that changes nothing: an empty ChangeSet, "no changes".
  new_project
  staged -- cat x.txt >"$T/cs" 2>"$T/err"
  check "no changes said" contains "$(cat "$T/err")" "garuda-stager: no changes"
  check "no changes: the command's output on stderr" contains "$(cat "$T/err")" $'a\nb'
  check "no changes: show" contains "$("$APPLIER" show <"$T/cs")" "No changes"
  "$APPLIER" apply --yes <"$T/cs" >/dev/null 2>&1
  check "no changes: apply exit 0" same "$?" 0

  # --- An ignored build output stays in staging for the next command of the
  # session; the project has none. Negative control: without --session the
  # next command does not see it.
  new_project
  staged --session keep -- sh -c 'mkdir -p build && echo built > build/out.txt' >"$T/cs" 2>"$T/err"
  check "ignored output: no question" contains "$("$APPLIER" show <"$T/cs")" "No changes"
  check "ignored output: counted" contains "$(cat "$T/err")" "build/: 1 file"
  check "ignored output: project has none" absent "$P/build"
  staged --session keep -- cat build/out.txt >/dev/null 2>"$T/err"
  check "ignored output: the next command of the session sees it" contains "$(cat "$T/err")" built
  staged -- cat build/out.txt >/dev/null 2>&1
  check "negative control: a one-shot call does not see it" same "$?" 1
  # The person's edit and a discarded change: the session's view follows the
  # project for paths git does not ignore.
  staged --session keep -- sed -i s/a/Q/ x.txt >/dev/null 2>&1
  echo person >x.txt
  staged --session keep -- cat x.txt >"$T/cs" 2>"$T/err"
  check "session view: the person's edit shows, the discarded change is gone" \
    contains "$(cat "$T/err")" $'\nperson\n'
  check "session kept" test -d "$HOME/.garuda/staging/"*-session-keep
  "$STAGER" end --session keep 2>/dev/null
  check "session ended" same "$(ls "$HOME/.garuda/staging" | grep -c session-keep)" 0

  # --- make into an ignored build folder; the next make of the session is
  # up to date.
  new_project
  printf 'build/out.txt: x.txt\n\tmkdir -p build\n\tcp x.txt build/out.txt\n' >Makefile
  staged --session mk -- make >"$T/cs" 2>"$T/err"
  check "make: no question" contains "$("$APPLIER" show <"$T/cs")" "No changes"
  check "make: only ignored output" contains "$(cat "$T/err")" "build/: 1 file"
  check "make: project has no build/" absent "$P/build"
  staged --session mk -- make >/dev/null 2>"$T/err"
  check "make: second run up to date" contains "$(cat "$T/err")" "up to date"
  "$STAGER" end --session mk 2>/dev/null

  # --- tar x, applied.
  new_project
  mkdir -p "$T/src-$BACKEND/lib" && echo one >"$T/src-$BACKEND/lib/one.txt"
  tar cf "$P/data.tar" -C "$T/src-$BACKEND" lib
  staged -- tar xf data.tar >"$T/cs" 2>/dev/null
  check "tar x listed" contains "$("$APPLIER" show <"$T/cs")" "A lib/one.txt"
  "$APPLIER" apply --yes <"$T/cs" >/dev/null 2>"$T/err" || cat "$T/err" >&2
  check "tar x applied" same "$(cat lib/one.txt)" one

  # --- git: .git is staged (the command may write it) but never applied,
  # and it follows the project at the next command.
  new_project
  head_before=$(git rev-parse HEAD)
  staged -- sh -c 'sed -i s/a/c/ x.txt && git -c user.name=t -c user.email=t@t commit -qam staged && git rev-parse HEAD' \
    >"$T/cs" 2>"$T/err"
  check "git: the commit ran in staging (its HEAD differs)" \
    test "$(grep -E '^[0-9a-f]{40}$' "$T/err")" != "$head_before"
  check "git: the project's HEAD is unchanged" same "$(git rev-parse HEAD)" "$head_before"
  shown=$("$APPLIER" show <"$T/cs")
  check "git: the work tree change is listed" contains "$shown" "M x.txt"
  # The overlay walk sees git's writes and counts them; the copy's list
  # leaves .git out.
  if [[ $BACKEND == overlay ]]; then
    check "git: .git counted, not applied" contains "$shown" ".git/:"
  fi
  "$APPLIER" apply --yes <"$T/cs" >/dev/null 2>&1
  check "git: after apply HEAD is still the project's" same "$(git rev-parse HEAD)" "$head_before"
  check "git: after apply the change is uncommitted" same "$(git status --porcelain)" " M x.txt"

  # In a session, git's writes last one command and the person's commits
  # show at the next.
  staged --session g -- git -c user.name=t -c user.email=t@t commit --allow-empty -qm staged-only \
    >/dev/null 2>&1
  git -c user.name=t -c user.email=t@t commit --allow-empty -qm person
  staged --session g -- git log --format=%s >/dev/null 2>"$T/err"
  check "git session: the person's commit shows" contains "$(cat "$T/err")" person
  check "git session: the staged commit is gone" test "$(grep -c staged-only "$T/err")" = 0
  "$STAGER" end --session g 2>/dev/null

  # --- A conflict: the person changes x.txt during the command; apply
  # refuses. The person's edit of z.txt, which the command did not touch, is
  # not listed (it would be reverted). Negative control: the same without the
  # edit applies.
  for edit in yes no; do
    new_project
    echo zed >z.txt
    rm -f "$T/cin" "$T/cerr"
    mkfifo "$T/cin" "$T/cerr"
    staged -- sh -c 'sed -i s/a/c/ x.txt; echo READY >&2; read line' \
      <"$T/cin" 2>"$T/cerr" >"$T/cs" &
    pid=$!
    exec 7>"$T/cin"
    exec 8<"$T/cerr"
    while read -r line <&8; do [[ "$line" == READY ]] && break; done
    if [[ $edit == yes ]]; then
      echo person >x.txt
      echo person >z.txt
    fi
    echo go >&7
    exec 7>&-
    wait "$pid"
    cat <&8 >/dev/null
    exec 8<&-
    check "conflict ($edit): z.txt not listed" \
      test "$("$APPLIER" show <"$T/cs" | grep -c 'z\.txt')" = 0
    "$APPLIER" apply --yes <"$T/cs" >/dev/null 2>&1
    status=$?
    if [[ $edit == yes ]]; then
      check "conflict: apply refuses with exit 4" same "$status" 4
      check "conflict: the person's edit stays" same "$(cat x.txt)" person
    else
      check "negative control: without the edit, apply works" same "$status" 0
      check "negative control: applied" same "$(cat x.txt)" $'c\nb'
    fi
  done

  # --- A staging setup that fails runs no command (a fake backend through
  # the test seam). Negative control: a direct-mode run works.
  new_project
  GARUDA_TEST_ONLY_FAIL_STAGING=1 staged -- touch marker >"$T/cs" 2>"$T/err"
  check "failed setup: exit 125" same "$?" 125
  check "failed setup: the reason" contains "$(cat "$T/err")" "could not be set up"
  check "failed setup: never direct mode" contains "$(cat "$T/err")" "never runs a command in direct mode"
  check "failed setup: the command did not run" absent marker
  check "failed setup: no ChangeSet" same "$(wc -c <"$T/cs")" 0
  GARUDA_TEST_ONLY_FAIL_STAGING=1 "$STAGER" run --mode direct -- touch marker 2>/dev/null
  check "negative control: direct mode runs" test -e marker

  # --- A view that fails later stops the command with an error: the named
  # session's layers are gone.
  new_project
  staged --session broken -- true >/dev/null 2>&1
  rm -rf "$HOME/.garuda/staging/"*-session-broken/{upper,copy}
  staged --session broken -- touch marker >/dev/null 2>"$T/err"
  check "lost view: exit 125" same "$?" 125
  check "lost view: said" contains "$(cat "$T/err")" "staging view failed"
  check "lost view: nothing ran" absent marker
  "$STAGER" end --session broken 2>/dev/null

  # --- A mode change only, a symlink inside the root (applied), a file
  # replaced by a folder, a name with a space and a newline.
  new_project
  staged -- sh -c 'chmod +x y.txt; ln -s x.txt link; rm x.txt; mkdir x.txt; echo in > x.txt/f; echo s > "a b
c"' >"$T/cs" 2>/dev/null
  "$APPLIER" apply --yes <"$T/cs" >/dev/null 2>"$T/err"
  check "varied: applied" same "$?" 0
  check "varied: mode" test -x y.txt
  check "varied: link" same "$(readlink link)" x.txt
  check "varied: file became folder" same "$(cat x.txt/f)" in
  check "varied: name with space and newline" same "$(cat "a b
c")" s

  # --- A replaced folder, a renamed folder, a folder replaced by a file.
  new_project
  mkdir -p d r q && echo old >d/old.txt && echo moved >r/m.txt && echo qq >q/f
  staged -- sh -c 'rm -rf d && mkdir d && touch d/new && mv r r2 && rm -rf q && echo file > q' \
    >"$T/cs" 2>/dev/null
  "$APPLIER" apply --yes <"$T/cs" >/dev/null 2>"$T/err"
  rc=$?
  [[ $rc == 0 ]] || cat "$T/err" >&2
  check "folders: applied" same "$rc" 0
  check "replaced folder: new file" test -e d/new
  check "replaced folder: old file gone" absent d/old.txt
  check "renamed folder: new name" same "$(cat r2/m.txt)" moved
  check "renamed folder: old name gone" absent r
  check "folder replaced by a file" same "$(cat q)" file

  # --- A symlink pointing out of the root is refused, nothing applied.
  new_project
  staged -- sh -c 'ln -s /etc/passwd out; echo ok > fine.txt' >"$T/cs" 2>/dev/null
  "$APPLIER" apply --yes <"$T/cs" >/dev/null 2>&1
  check "outside link: refused (exit 5)" same "$?" 5
  check "outside link: not applied" absent out
  check "outside link: all or nothing" absent fine.txt

  # --- A 100 MB file streams through the pipe and arrives whole.
  new_project
  staged -- sh -c 'head -c 100000000 /dev/urandom > big.bin && sha256sum big.bin >&2' \
    2>"$T/err" | "$APPLIER" apply --yes >/dev/null 2>&1
  check "100 MB: applied" same "$(sha256sum big.bin)" "$(grep big.bin "$T/err")"

  # --- A name that is not UTF-8.
  new_project
  staged -- sh -c 'echo raw > "$(printf "n\377me")"' 2>/dev/null |
    "$APPLIER" apply --yes >/dev/null 2>&1
  check "non-UTF-8 name applied" same "$(cat "$(printf 'n\377me')")" raw

  # --- A sensitive ignored file is shown by name, and never applied.
  new_project
  echo '.env' >>.gitignore
  staged -- sh -c 'echo TOKEN=1 > .env' >"$T/cs" 2>/dev/null
  check "sensitive ignored file named" contains "$("$APPLIER" show <"$T/cs")" ".env"
  "$APPLIER" apply --yes <"$T/cs" >/dev/null 2>&1
  check "sensitive ignored file not applied" absent .env

  # --- A path denied to commands (.garuda) is refused in staged mode too.
  new_project
  rm -rf .garuda
  staged -- sh -c 'mkdir -p .garuda && echo "{}" > .garuda/settings.json; echo ok > fine.txt' \
    >"$T/cs" 2>/dev/null
  check ".garuda: refused in the list" contains "$("$APPLIER" show <"$T/cs")" "REFUSED .garuda"
  "$APPLIER" apply --yes <"$T/cs" >/dev/null 2>&1
  check ".garuda: apply refuses (exit 5)" same "$?" 5
  check ".garuda: project has no settings" absent .garuda/settings.json

  # --- An incomplete list (the walk's file limit lowered through the test
  # seam) is never applied. Negative control: the full limit applies.
  for limit in 3 ""; do
    new_project
    GARUDA_TEST_ONLY_FILE_LIMIT=$limit staged -- sh -c 'for i in 1 2 3 4 5 6; do echo $i > f$i; done' \
      >"$T/cs" 2>/dev/null
    "$APPLIER" apply --yes <"$T/cs" >/dev/null 2>&1
    status=$?
    if [[ -n $limit ]]; then
      check "incomplete: shown" contains "$("$APPLIER" show <"$T/cs")" "incomplete"
      check "incomplete: not applied" absent f1
      check "incomplete: apply does not say applied" test "$status" -ne 0
    else
      check "negative control: complete list applies" same "$(cat f6)" 6
    fi
  done

  # --- The project is read-only for the stager itself: --out inside the
  # project fails. Negative control: --out outside works.
  new_project
  staged --out "$P/list.cs" -- sed -i s/a/b/ x.txt >/dev/null 2>&1
  check "stager cannot write the project" absent "$P/list.cs"
  staged --out "$T/list.cs" -- sed -i s/a/b/ x.txt >/dev/null 2>&1
  check "negative control: --out outside the project" test -s "$T/list.cs"

  # --- npm init -y (applied), python3 -m venv in an ignored folder (kept in
  # the session's staging, usable by the next command).
  new_project
  if [[ -x /usr/bin/npm ]]; then
    staged -- npm init -y >"$T/cs" 2>/dev/null
    check "npm init: package.json listed" contains "$("$APPLIER" show <"$T/cs")" "A package.json"
    check "npm init: not in the project before apply" absent package.json
  fi
  staged --session venv -- python3 -m venv --without-pip .venv >"$T/cs" 2>"$T/err"
  check "venv: no question" contains "$("$APPLIER" show <"$T/cs")" "No changes"
  check "venv: counted" contains "$(cat "$T/err")" ".venv/:"
  check "venv: project has none" absent .venv
  staged --session venv -- .venv/bin/python -c 'print("in venv")' >/dev/null 2>"$T/err"
  check "venv: the next command uses it" contains "$(cat "$T/err")" "in venv"
  "$STAGER" end --session venv 2>/dev/null
}

run_backend overlay
run_backend copy

# auto says which backend it took, and it is overlay when the probe's
# overlay canary passes.
BACKEND=auto
new_project
"$STAGER" run --mode staged -- true >/dev/null 2>"$T/err"
if "$STAGER" probe --json | grep -q '"name":"overlayfs in a user namespace","available":true'; then
  check "auto takes overlay" contains "$(head -1 "$T/err")" "overlay backend"
else
  check "auto takes copy" contains "$(head -1 "$T/err")" "copy backend"
fi

echo "$checks checks, $failures failures" >&2
[[ $failures -eq 0 ]]
