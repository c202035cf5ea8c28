// Reading a person's answer on the terminal, one short line at a time, with
// Ctrl-C as "no": shared by the change question (question.h) and the
// permission question (permission_question.h).
#ifndef GARUDA_LIB_QUESTION_ANSWER_READER_H_
#define GARUDA_LIB_QUESTION_ANSWER_READER_H_

#include <signal.h>

#include <string>

namespace garuda {
namespace question_internal {

// While it lives, SIGINT is caught (and unblocked) for this question: the
// handler writes to a pipe that the read waits on too, so a signal that
// lands just before the read is not lost. Only one lives at a time.
class AnswerReader {
 public:
  AnswerReader();
  ~AnswerReader();
  AnswerReader(const AnswerReader&) = delete;
  AnswerReader& operator=(const AnswerReader&) = delete;

  // False when the pipe could not be made: no answer can be waited for.
  bool ok() const { return ok_; }
  bool interrupted() const;
  // One line from `in` (without its '\n' or '\r', at most 64 characters
  // kept); false on end of input, an error or Ctrl-C.
  bool ReadLine(int in, std::string* line);

 private:
  bool ok_ = false;
  struct sigaction previous_ = {};
  sigset_t previous_mask_;
};

}  // namespace question_internal
}  // namespace garuda

#endif  // GARUDA_LIB_QUESTION_ANSWER_READER_H_
