#include "lib/question/answer_reader.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <unistd.h>

#include <cerrno>

namespace garuda {
namespace question_internal {
namespace {

volatile sig_atomic_t interrupted_flag = 0;
int interrupt_pipe[2] = {-1, -1};

void OnInterrupt(int) {
  int saved_errno = errno;
  interrupted_flag = 1;
  if (interrupt_pipe[1] >= 0) (void)!::write(interrupt_pipe[1], "x", 1);
  errno = saved_errno;
}

}  // namespace

AnswerReader::AnswerReader() {
  sigemptyset(&previous_mask_);
  if (::pipe2(interrupt_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
    interrupt_pipe[0] = interrupt_pipe[1] = -1;
    return;
  }
  interrupted_flag = 0;
  struct sigaction action = {};
  action.sa_handler = OnInterrupt;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGINT, &action, &previous_);
  // A parent may have started us with SIGINT blocked; Ctrl-C must still
  // reach the question.
  sigset_t unblock;
  sigemptyset(&unblock);
  sigaddset(&unblock, SIGINT);
  ::pthread_sigmask(SIG_UNBLOCK, &unblock, &previous_mask_);
  ok_ = true;
}

AnswerReader::~AnswerReader() {
  if (!ok_) return;
  ::pthread_sigmask(SIG_SETMASK, &previous_mask_, nullptr);
  ::sigaction(SIGINT, &previous_, nullptr);
  for (int& fd : interrupt_pipe) {
    ::close(fd);
    fd = -1;
  }
}

bool AnswerReader::interrupted() const { return interrupted_flag != 0; }

bool AnswerReader::ReadLine(int in, std::string* line) {
  line->clear();
  if (!ok_) return false;
  for (;;) {
    struct pollfd fds[2] = {{in, POLLIN, 0}, {interrupt_pipe[0], POLLIN, 0}};
    int ready = ::poll(fds, 2, -1);
    if (interrupted_flag) return false;
    if (ready < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    char c;
    ssize_t n = ::read(in, &c, 1);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) return false;
    if (c == '\n' || c == '\r') return true;
    if (line->size() < 64) line->push_back(c);
  }
}

}  // namespace question_internal
}  // namespace garuda
