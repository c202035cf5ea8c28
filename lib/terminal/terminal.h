// The person at a terminal: the Interaction that prints what the session
// does and asks the questions, and the LineSource that reads prompts with
// line editing and history (libedit).
//
// Everything that came from the model or a tool (streamed text, tool
// summaries, outcomes, notices, question details) is written with its
// control, bidirectional and zero-width characters made visible
// (lib/base/visible.h), so an answer cannot move the cursor, rewrite
// the screen or hide text from the person.
//
// Ctrl-C (SIGINT): while a request is in flight (between two ReadLine
// calls) it sets the CancelFlag, and the session comes back to the prompt;
// at the prompt it clears a line that has text; at an empty prompt right
// after a cancel or a first Ctrl-C, it leaves (ReadLine returns nullopt).
// During a permission question it answers "no"; during the T5 question
// lib/question's Ask discards. The terminal's settings are restored when
// ReadLine returns, when SIGTERM, SIGHUP or SIGQUIT ends the process during
// a read, and while Ctrl-Z (SIGTSTP) has it stopped during a read (once
// continued, the editor takes the terminal again and redraws the line). A
// resized window (SIGWINCH) redraws the line being edited.
#ifndef GARUDA_LIB_TERMINAL_TERMINAL_H_
#define GARUDA_LIB_TERMINAL_TERMINAL_H_

#include <memory>
#include <string>

#include "absl/strings/string_view.h"
#include "lib/agent/interaction.h"
#include "lib/base/cancel_flag.h"

namespace garuda {
namespace terminal {

using agent::Interaction;
using agent::LineSource;

// Questions are read from `in_fd` and everything is written to `out_fd`
// (the terminal, usually 0 and 1; neither is closed). Colours, the model's
// markdown formatted (lib/terminal/markdown.h) and a running command's line
// rewritten in place only when `out_fd` is a terminal, TERM is not "dumb",
// NO_COLOR is not set and not `plain` (--plain): otherwise the model's text
// as it streams, unformatted.
//
// A command's output is shown under its call, the last lines of it, with
// how many came before; /output (ShowLastOutput) shows the whole of the last
// one. While a command runs, one line says for how long and what it printed
// last.
std::unique_ptr<Interaction> MakeTerminalInteraction(int in_fd, int out_fd,
                                                     bool plain = false);

// Reads standard input and writes the prompt to standard output. History:
// loaded from and appended to `history_path` (created 0600; "" keeps no
// history); a line that starts with a space is not kept. `cancel` (not
// owned, may be null) is set by Ctrl-C while no line is being read; ReadLine
// resets it when the prompt comes back. Only one LineSource may exist at a
// time (it owns the process's SIGINT handler while it lives).
std::unique_ptr<LineSource> MakeTerminalLineSource(
    const std::string& history_path, CancelFlag* cancel);

namespace terminal_internal {
// The same on chosen descriptors (tests: a pty).
std::unique_ptr<LineSource> MakeTerminalLineSourceOn(
    int in_fd, int out_fd, const std::string& history_path, CancelFlag* cancel);

// Text for the terminal: control, bidirectional and zero-width characters
// made visible as lib/question does, newlines and tabs kept, backslashes
// kept single (text that lib/question already made visible passes
// unchanged).
std::string TerminalSafe(absl::string_view text);
}  // namespace terminal_internal

}  // namespace terminal
}  // namespace garuda

#endif  // GARUDA_LIB_TERMINAL_TERMINAL_H_
