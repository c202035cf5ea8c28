// Reading a person's answer on the terminal, with Ctrl-C as "no": shared by
// the change question (question.h), its pager (pager.h) and the permission
// question (permission_question.h).
//
// On a terminal an answer is one key press: the terminal is put in raw mode
// (no line editing, no echo; Ctrl-C still a signal, Ctrl-Z and Ctrl-\ only
// keys) for the reader's life, and put back when it ends, on every return
// and on SIGTERM, SIGHUP or SIGQUIT before the process's own handling of
// them goes on. From a pipe (a script, a test) an answer is one line: its
// one letter or the table's whole word (keys.h).
#ifndef GARUDA_LIB_QUESTION_ANSWER_READER_H_
#define GARUDA_LIB_QUESTION_ANSWER_READER_H_

#include <signal.h>
#include <termios.h>

#include <optional>
#include <string>

#include "absl/types/span.h"

namespace garuda {
namespace question_internal {

// Keys that are escape sequences on a terminal.
enum SpecialKey : int {
  kKeyUp = 0x101,
  kKeyDown,
  kKeyPageUp,
  kKeyPageDown,
  kKeyHome,
  kKeyEnd,
};

// While it lives, SIGINT is caught (and unblocked) for this question: the
// handler writes to a pipe that the read waits on too, so a signal that
// lands just before the read is not lost. Only one lives at a time.
class AnswerReader {
 public:
  explicit AnswerReader(int in);
  ~AnswerReader();
  AnswerReader(const AnswerReader&) = delete;
  AnswerReader& operator=(const AnswerReader&) = delete;

  // False when the pipe could not be made: no answer can be waited for.
  bool ok() const { return ok_; }
  bool interrupted() const;
  // One key press per answer (`in` is a terminal, now in raw mode).
  bool raw() const { return raw_; }

  // Before a prompt: on a terminal what was typed before the question was
  // on the screen is dropped, so it cannot answer a question not yet seen.
  void DropTypeAhead();

  // The answer among `offered` (keys of keys.h): the key; 0 for anything
  // else (the question asks again); nullopt at the end of input, on an
  // error or on Ctrl-C.
  std::optional<char> ReadAnswer(absl::Span<const char> offered);

  // One key for the pager: a byte, or a SpecialKey. From a pipe, the first
  // character of the next line ('\n' for an empty one); the rest of that
  // line is kept for ReadText. nullopt as for ReadAnswer.
  std::optional<int> ReadKey();

  // A line of text after a key (the pager's search): from a pipe the rest
  // of the key's line; on a terminal the keys typed up to Enter, echoed on
  // `out` (Backspace removes one). nullopt on Ctrl-C, Escape or the end.
  std::optional<std::string> ReadText(int out);

 private:
  // One byte from `in`; false at the end, on an error or Ctrl-C.
  bool ReadByte(char* c, int timeout_ms = -1);
  bool ReadPipeLine(std::string* line);

  int in_;
  bool ok_ = false;
  bool raw_ = false;
  std::string rest_;  // of a pipe's line, for ReadText
  struct sigaction previous_ = {};
  sigset_t previous_mask_;
};

}  // namespace question_internal
}  // namespace garuda

#endif  // GARUDA_LIB_QUESTION_ANSWER_READER_H_
