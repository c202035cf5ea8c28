#!/bin/bash
# garuda-agent on a real terminal: a tmux pane runs the agent in staged mode
# against the scripted OpenAI-compatible provider of tests/providers. The
# model asks to run a command that writes a right-to-left override (U+202E)
# into a tracked file. The person (send-keys) sees the diff with the hidden
# character made visible, answers Apply, and the file changes; in a second
# run answers Discard, and it does not (the negative control of the apply).
#
# Every wait polls capture-pane (or a file) until the expected text shows or
# a deadline passes; nothing sleeps and hopes.
#
# Usage (Bazel sets these): TEST_TMPDIR, TEST_SRCDIR. By hand:
#   TEST_TMPDIR=$(mktemp -d) BIN=$PWD/bazel-bin tests/agent_terminal/tmux_test.sh
set -u

RUNFILES="${TEST_SRCDIR:-}/garuda"
BIN="${BIN:-$RUNFILES}"
T="$TEST_TMPDIR/agent-terminal"
DEADLINE_SECONDS="${DEADLINE_SECONDS:-60}"
rm -rf "$T"
mkdir -p "$T/home/.garuda" "$T/helpers"
export HOME="$T/home"
export PATH=/usr/bin:/bin
export GIT_CONFIG_NOSYSTEM=1
# tmux's socket: a short path of our own (Bazel's TEST_TMPDIR is longer
# than a socket address may be), so the person's own tmux is never touched.
SOCKET_DIR="$(mktemp -d /tmp/garuda-tmux.XXXXXX)" || exit 1
TMUX=(tmux -S "$SOCKET_DIR/socket" -f /dev/null)

if ! command -v tmux >/dev/null; then
  echo "FAIL: tmux is not installed (tools/setup.sh installs it)" >&2
  exit 1
fi

# The helpers beside the agent, as an installation has them.
for program in garuda-agent garuda-stager garuda-applier garuda-auditor \
  garuda-budgeter; do
  ln -s "$BIN/cmd/$program/$program" "$T/helpers/$program" || exit 1
done
PROVIDER="$BIN/tests/providers/scripted_provider"

failures=0
fail() {
  echo "FAIL [$RUN] $*" >&2
  failures=$((failures + 1))
}

provider_pid=""
cleanup() {
  "${TMUX[@]}" kill-server 2>/dev/null
  if [[ -n "$provider_pid" ]]; then kill "$provider_pid" 2>/dev/null; fi
  rm -rf "$SOCKET_DIR"
}
trap cleanup EXIT

pane() { "${TMUX[@]}" capture-pane -p -J -t agent -S -200 2>/dev/null; }

# wait_pane TEXT: true once the pane shows TEXT, false at the deadline.
wait_pane() {
  local end=$((SECONDS + DEADLINE_SECONDS))
  while ((SECONDS < end)); do
    if [[ "$(pane)" == *"$1"* ]]; then return 0; fi
    tmux_alive || { [[ "$(pane)" == *"$1"* ]]; return; }
    sleep 0.1  # between two polls
  done
  echo "  the pane never showed $(printf %q "$1"); it shows:" >&2
  pane | sed 's/^/  | /' >&2
  return 1
}
tmux_alive() { "${TMUX[@]}" has-session -t agent 2>/dev/null; }

# wait_file FILE: true once FILE is not empty.
wait_file() {
  local end=$((SECONDS + DEADLINE_SECONDS))
  while ((SECONDS < end)); do
    [[ -s "$1" ]] && return 0
    sleep 0.1
  done
  return 1
}

# The script: a bash call whose command writes U+202E (as printf octal
# escapes, so the script file itself is plain ASCII), then a closing answer.
cat >"$T/script.json" <<'EOF'
{"replies": [
  {"text": "I will change the value.",
   "toolCalls": [{"id": "call_1", "name": "bash",
     "argumentsJson": "{\"command\": \"printf 'value = 2;\\\\342\\\\200\\\\256 // ok\\\\n' > config.txt\"}"}]},
  {"text": "Finished the change."}
]}
EOF
printf '{"commands": {"mode": "staged"}}\n' >"$HOME/.garuda/settings.json"
RLO=$'\xe2\x80\xae'

# start_session SCRIPT [FIRST]: a fresh project ($P, config.txt in git), the
# scripted provider serving SCRIPT, and garuda-agent in a tmux pane, up to
# its first prompt (whose first line shows FIRST, "commands staged" by
# default). False when something did not start.
start_session() {
  P="$T/project-$RUN"
  mkdir -p "$P"
  (cd "$P" && printf 'value = 1;\n' >config.txt && git init -q && git add -A &&
    git -c user.name=t -c user.email=t@t commit -qm init) || exit 1

  rm -f "$T/port" "$T/requests.jsonl"
  "$PROVIDER" --kind=openai --script="$1" --port-file="$T/port" \
    --requests-log="$T/requests.jsonl" >/dev/null 2>"$T/provider-$RUN.err" &
  provider_pid=$!
  wait_file "$T/port" || { fail "the scripted provider did not start"; return 1; }
  local port
  port="$(cat "$T/port")"

  "${TMUX[@]}" new-session -d -s agent -x 200 -y 60 \
    "cd '$P' && TERM=xterm '$T/helpers/garuda-agent' --provider openai \
      --model scripted --base-url http://127.0.0.1:$port/v1 \
      --helpers-dir '$T/helpers'; echo \"AGENT EXITED \$?\"; sleep 600" ||
    { fail "tmux did not start"; return 1; }

  wait_pane "${2:-commands staged}" || { fail "no first line"; return 1; }
  wait_pane "> " || { fail "no prompt"; return 1; }
  # The agent locked itself down before the first prompt (docs/agent.md).
  [[ "$(pane)" == *"agent locked down (Landlock ABI"*", seccomp; "* ]] ||
    fail "the first lines do not report the agent's lockdown"
}

# end_session: the agent has left with status 0 and no helper was killed;
# the pane and the provider go.
end_session() {
  wait_pane "AGENT EXITED 0" || fail "the agent did not leave with status 0"
  [[ "$(pane)" != *"killed by signal"* ]] || fail "a helper was killed"
  "${TMUX[@]}" kill-server 2>/dev/null
  kill "$provider_pid" 2>/dev/null
  wait "$provider_pid" 2>/dev/null
  provider_pid=""
}

# run ANSWER: one session in which the person answers ANSWER ("a" or "d")
# to the staged-command question.
run() {
  local answer="$1"
  start_session "$T/script.json" || return
  "${TMUX[@]}" send-keys -t agent "Please change the value." Enter
  wait_pane "[a]pply, [d]iscard" || { fail "no staged-command question"; return; }

  local shown
  shown="$(pane)"
  [[ "$shown" == *"+value = 2;<U+202E> // ok"* ]] ||
    fail "the diff does not show the hidden character as <U+202E>"
  [[ "$shown" == *"1 hidden characters shown as marks"* ]] ||
    fail "the file list does not count the hidden character"
  [[ "$shown" != *"$RLO"* ]] ||
    fail "the raw U+202E reached the terminal"
  # The project has not changed while the question waits.
  [[ "$(cat "$P/config.txt")" == "value = 1;" ]] ||
    fail "the project changed before the answer"

  "${TMUX[@]}" send-keys -t agent "$answer" Enter
  if [[ "$answer" == a ]]; then
    wait_pane "The user applied the changes" || fail "no applied line"
  else
    wait_pane "The user discarded the changes" || fail "no discarded line"
  fi
  wait_pane "Finished the change." || fail "the model's closing answer is missing"
  # The outcome line reached the model with the command's result.
  if [[ "$answer" == a ]]; then
    grep -q "The user applied the changes" "$T/requests.jsonl" ||
      fail "the model was not told the changes were applied"
  else
    grep -q "The user discarded the changes" "$T/requests.jsonl" ||
      fail "the model was not told the changes were discarded"
  fi

  if [[ "$answer" == a ]]; then
    "${TMUX[@]}" send-keys -t agent "/exit" Enter
  else
    # Leave with Ctrl-C twice at the empty prompt: the first shows a hint;
    # the helpers (in their own process group) must not get it.
    "${TMUX[@]}" send-keys -t agent C-c
    wait_pane "Ctrl-C again to leave" || fail "no hint after one Ctrl-C"
    "${TMUX[@]}" send-keys -t agent C-c
  fi
  end_session
}

# expect_file WHAT CONTENT: the project's config.txt after the run.
expect_file() {
  if [[ "$(cat "$P/config.txt")" == "$2" ]]; then
    echo "ok [$RUN] $1"
  else
    fail "$1: the file is $(cat -A "$P/config.txt")"
  fi
}

RUN=apply
run a
expect_file "Apply: the file has the new content" "value = 2;$RLO // ok"

RUN=discard
run d
expect_file "Discard: the file is unchanged" "value = 1;"

# Ctrl-C while the model answers: the request stops (the server holds its
# stream open after the first words), the prompt comes back, and a second
# Ctrl-C at the empty prompt leaves.
cat >"$T/hold.json" <<'EOF'
{"replies": [{"text": "Once upon a time there was a long story", "textPieces": 4,
              "fault": "HOLD"}]}
EOF
RUN=cancel
if start_session "$T/hold.json"; then
  "${TMUX[@]}" send-keys -t agent "Tell me a story." Enter
  wait_pane "Once" || fail "the first words did not stream"
  "${TMUX[@]}" send-keys -t agent C-c
  wait_pane "Cancelled" || fail "Ctrl-C did not cancel the request"
  [[ "$(pane)" != *"Ctrl-C again to leave"* ]] ||
    fail "the Ctrl-C in flight was taken as one at the prompt"
  "${TMUX[@]}" send-keys -t agent C-c
  end_session
  echo "ok [cancel] Ctrl-C stopped the request; the second one left"
fi

# The everyday session, in direct mode: tool calls with their arguments and
# a refused input with its reason; a command's output tail and /output; a
# write and /undo naming it; the model's markdown formatted in colour; the
# status line; a paste as one prompt; Ctrl-C stopping a running command
# (and what it started); Ctrl-L; and a resumed session's last exchanges.
printf '{"permissions": {"allow": ["write_file"]}}\n' >"$HOME/.garuda/settings.json"
cat >"$T/session.json" <<'EOF'
{"replies": [
  {"text": "Looking around.", "toolCalls": [
    {"id": "g1", "name": "grep", "argumentsJson": "{\"pattern\": \"value\", \"glob\": \"*.txt\"}"},
    {"id": "r1", "name": "read_file", "argumentsJson": "{\"path\": \"config.txt\", \"offset\": 1, \"limit\": 5}"},
    {"id": "l1", "name": "list_files", "argumentsJson": "{\"path\": \".\"}"},
    {"id": "r2", "name": "read_file", "argumentsJson": "{\"path\": \"../outside.txt\"}"}]},
  {"toolCalls": [{"id": "b1", "name": "bash",
     "argumentsJson": "{\"command\": \"for i in $(seq 1 30); do echo out line $i; done\"}"}]},
  {"toolCalls": [{"id": "w1", "name": "write_file",
     "argumentsJson": "{\"path\": \"notes.txt\", \"content\": \"hi\\n\"}"}]},
  {"text": "# Done\n- **all** good\n"},
  {"toolCalls": [{"id": "b2", "name": "bash",
     "argumentsJson": "{\"command\": \"sleep @SLEEPER@ & echo $((6 * 7)) ready; wait\"}"}]},
  {"text": "Noted."}
]}
EOF
# The background sleep's length is this run's own (the test's pid), so that
# the check below never finds the sleep of another run on the machine (two
# runs at once under --runs_per_test saw each other's).
SLEEPER="3600.$$"
sed -i "s/@SLEEPER@/$SLEEPER/" "$T/session.json"
RUN=session
visible() { "${TMUX[@]}" capture-pane -p -J -t agent 2>/dev/null; }
sleepers() { pgrep -f "^sleep $SLEEPER\$" 2>/dev/null; }
if start_session "$T/session.json" "commands direct"; then
  "${TMUX[@]}" send-keys -t agent "Look around." Enter
  wait_pane "good" || fail "the first turn did not end"
  wait_pane "tokens this turn" || fail "no status line after the turn"
  shown="$(pane)"
  for line in 'grep "value" in the project root (*.txt)' \
    'read_file config.txt lines 1-5' 'list_files the project root' \
    "the call's input was refused: " 'out line 30' \
    '20 earlier lines not shown (/output shows all 30)' \
    'write_file notes.txt (3 bytes)'; do
    [[ "$shown" == *"$line"* ]] || fail "the pane does not show: $line"
  done
  [[ "$shown" != *"out line 20"* ]] || fail "the output tail is not cut"
  # Markdown in colour: a bullet, the markers gone, bold on.
  [[ "$shown" == *"• all good"* ]] || fail "the list item is not formatted"
  [[ "$shown" != *"**all**"* ]] || fail "the bold markers are still shown"
  "${TMUX[@]}" capture-pane -e -p -J -t agent -S -200 | grep -q $'\e\\[1m' ||
    fail "no bold in the captured colours"
  [[ "$shown" == *"tokens this turn"*"| commands direct"* ]] ||
    fail "the status line does not name the mode"
  [[ -f "$P/notes.txt" ]] || fail "write_file did not apply"

  "${TMUX[@]}" send-keys -t agent "/output" Enter
  wait_pane "| out line 20" || fail "/output does not show the whole output"

  # A paste is one prompt (tmux pastes with the marks the agent asked for).
  "${TMUX[@]}" set-buffer -b garuda $'first pasted line\nsecond pasted line'
  "${TMUX[@]}" paste-buffer -p -b garuda -t agent
  "${TMUX[@]}" send-keys -t agent Enter
  wait_pane "42 ready" || fail "the running command's output did not show"
  [[ -n "$(sleepers)" ]] || fail "the command's background sleep is not running (control)"
  grep -qF 'first pasted line\\nsecond pasted line' "$T/requests.jsonl" ||
    fail "the paste did not reach the model as one message"
  "${TMUX[@]}" send-keys -t agent C-c
  wait_pane "the command was stopped" || fail "Ctrl-C did not stop the command"
  end=$((SECONDS + DEADLINE_SECONDS))
  while [[ -n "$(sleepers)" ]] && ((SECONDS < end)); do sleep 0.1; done
  [[ -z "$(sleepers)" ]] || fail "the command's background sleep outlived the stop"
  [[ "$(pane)" != *"the request stopped"* ]] ||
    fail "the stop was reported as a cancelled request"

  "${TMUX[@]}" send-keys -t agent "after" Enter
  wait_pane "Noted." || fail "no answer after the stop"
  grep -q "stopped by the person" "$T/requests.jsonl" ||
    fail "the model was not told the command was stopped"

  "${TMUX[@]}" send-keys -t agent "/undo" Enter
  wait_pane "Restored 1 file: notes.txt" || fail "/undo does not name the file"
  wait_pane "not what a command changed" || fail "/undo does not warn in direct mode"
  [[ ! -e "$P/notes.txt" ]] || fail "/undo did not remove notes.txt"

  # Ctrl-L clears the screen: the first turn is no longer on it.
  "${TMUX[@]}" send-keys -t agent C-l
  end=$((SECONDS + DEADLINE_SECONDS))
  while [[ "$(visible)" == *"Looking around."* ]] && ((SECONDS < end)); do
    sleep 0.1
  done
  [[ "$(visible)" != *"Looking around."* ]] || fail "Ctrl-L did not clear the screen"

  "${TMUX[@]}" send-keys -t agent "/exit" Enter
  wait_pane "AGENT EXITED 0" || fail "the agent did not leave"
  id="$(pane | grep -o -- '--resume [0-9a-zA-Z_-]*' | tail -1 | cut -d' ' -f2)"
  [[ -n "$id" ]] || fail "no session id to resume"
  "${TMUX[@]}" kill-session -t agent 2>/dev/null
  port="$(cat "$T/port")"
  "${TMUX[@]}" new-session -d -s agent -x 200 -y 60 \
    "cd '$P' && TERM=xterm '$T/helpers/garuda-agent' --provider openai \
      --model scripted --base-url http://127.0.0.1:$port/v1 \
      --helpers-dir '$T/helpers' --resume '$id'; echo \"AGENT EXITED \$?\"; sleep 600"
  wait_pane "Resumed; the last exchanges:" || fail "the resumed session does not say so"
  wait_pane "> after" || fail "the resumed session does not show the last prompt"
  [[ "$(pane)" == *"> first pasted line"* ]] || fail "an earlier exchange is missing"
  "${TMUX[@]}" send-keys -t agent "/exit" Enter
  end_session
  ((failures == 0)) && echo "ok [session] output, stop, paste, markdown, status, undo, Ctrl-L, resume"
fi

if ((failures > 0)); then
  echo "$failures failure(s)" >&2
  exit 1
fi
echo "PASS"
