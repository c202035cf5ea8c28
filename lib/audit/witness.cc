#include "lib/audit/witness.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "lib/audit/json_records.h"
#include "lib/audit/paths.h"
#include "lib/base/errno_status.h"
#include "lib/base/files.h"
#include "lib/base/json_message.h"
#include "lib/base/sha256.h"
#include "lib/base/status_macros.h"
#include "lib/ipc/helper_process.h"

namespace garuda {
namespace {

constexpr size_t kMaxWitnessLine = 64 * 1024;

absl::Status CheckHead(const audit::WitnessHead& head) {
  if (head.dir().empty() || head.dir().find('/') != std::string::npos) {
    return absl::InvalidArgumentError("head has no valid \"dir\"");
  }
  RETURN_IF_ERROR(CheckLogName(head.log()));
  if (head.seq() == 0) return absl::InvalidArgumentError("head has seq 0");
  if (!IsHexDigest(head.hash())) {
    return absl::InvalidArgumentError("head \"hash\" is not 64 hex digits");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<WitnessClient>> WitnessClient::Start(
    const std::string& command, absl::Duration reply_timeout) {
  // A write to a witness that died must come back as EPIPE, not kill us.
  ::signal(SIGPIPE, SIG_IGN);
  int to_child[2], from_child[2];
  if (::pipe2(to_child, O_CLOEXEC) != 0) return LastErrnoStatus("pipe2");
  UniqueFd to_read(to_child[0]), to_write(to_child[1]);
  if (::pipe2(from_child, O_CLOEXEC) != 0) return LastErrnoStatus("pipe2");
  UniqueFd from_read(from_child[0]), from_write(from_child[1]);
  pid_t pid = ::fork();
  if (pid < 0) return LastErrnoStatus("fork (checkpointCommand)");
  if (pid == 0) {
    // Child: only async-signal-safe calls until exec. dup2 clears
    // O_CLOEXEC on 0 and 1; every other descriptor of the auditor is
    // O_CLOEXEC and does not reach the command.
    ::signal(SIGPIPE, SIG_DFL);
    if (::dup2(to_read.get(), 0) < 0 || ::dup2(from_write.get(), 1) < 0) {
      ::_exit(127);
    }
    ::execl("/bin/sh", "sh", "-c", command.c_str(),
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  return std::unique_ptr<WitnessClient>(new WitnessClient(
      command, pid, std::move(to_write), std::move(from_read), reply_timeout));
}

WitnessClient::WitnessClient(std::string command, pid_t pid, UniqueFd to_child,
                             UniqueFd from_child, absl::Duration reply_timeout)
    : command_(std::move(command)),
      pid_(pid),
      to_child_(std::move(to_child)),
      from_child_(std::move(from_child)),
      reply_timeout_(reply_timeout) {}

WitnessClient::~WitnessClient() { KillAndReap(); }

bool WitnessClient::WaitForExit(absl::Duration timeout) {
  absl::Time deadline = absl::Now() + timeout;
  while (!reaped_) {
    int status;
    pid_t done = ::waitpid(pid_, &status, WNOHANG);
    if (done == pid_) {
      reaped_ = true;
      wait_status_ = status;
    } else if ((done < 0 && errno != EINTR) || absl::Now() > deadline) {
      return false;
    } else {
      absl::SleepFor(absl::Milliseconds(2));
    }
  }
  return true;
}

void WitnessClient::KillAndReap() {
  if (reaped_) return;
  ::kill(pid_, SIGKILL);
  while (::waitpid(pid_, &wait_status_, 0) < 0 && errno == EINTR) {
  }
  reaped_ = true;
}

std::string WitnessClient::ExitDescription() {
  // A witness that closed its pipes is usually exiting: give it a moment,
  // so that the message can say how it ended.
  WaitForExit(absl::Seconds(2));
  if (!reaped_) return "is still running";
  return ipc::DescribeWaitStatus(wait_status_);
}

absl::StatusOr<std::string> WitnessClient::ReadReplyLine() {
  absl::Time deadline = absl::Now() + reply_timeout_;
  for (;;) {
    size_t newline = buffer_.find('\n');
    if (newline != std::string::npos) {
      std::string line = buffer_.substr(0, newline);
      buffer_.erase(0, newline + 1);
      return line;
    }
    if (buffer_.size() > kMaxWitnessLine) {
      return absl::DataLossError("its reply line is over 64 KiB");
    }
    absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) {
      return absl::DeadlineExceededError(absl::StrCat(
          "no reply within ", absl::FormatDuration(reply_timeout_)));
    }
    struct pollfd poll_fd = {from_child_.get(), POLLIN, 0};
    int ready = ::poll(&poll_fd, 1,
                       static_cast<int>(absl::ToInt64Milliseconds(left)) + 1);
    if (ready < 0) {
      if (errno == EINTR) continue;
      return LastErrnoStatus("poll");
    }
    if (ready == 0) continue;
    char chunk[4096];
    ssize_t n = ::read(from_child_.get(), chunk, sizeof(chunk));
    if (n < 0) {
      if (errno == EINTR) continue;
      return LastErrnoStatus("read");
    }
    if (n == 0) return absl::UnavailableError("it closed its output");
    buffer_.append(chunk, static_cast<size_t>(n));
  }
}

absl::Status WitnessClient::Send(const audit::WitnessHead& head) {
  if (!broken_.ok()) return broken_;
  auto fail = [&](absl::string_view what) {
    broken_ = absl::UnavailableError(absl::StrCat("witness \"", command_,
                                                  "\" (pid ", pid_, ") ", what,
                                                  "; it ", ExitDescription()));
    return broken_;
  };
  std::string line = WitnessHeadJson(head) + "\n";
  absl::Status written = WriteAll(to_child_.get(), line);
  if (!written.ok()) {
    return fail(absl::StrCat("could not take the head at seq ", head.seq(),
                             ": ", written.message()));
  }
  absl::StatusOr<std::string> reply_line = ReadReplyLine();
  if (!reply_line.ok()) {
    return fail(absl::StrCat("did not answer the head at seq ", head.seq(),
                             ": ", reply_line.status().message()));
  }
  audit::WitnessReply reply;
  absl::Status parsed = ParseJsonMessage(*reply_line, "reply", &reply);
  if (!parsed.ok()) {
    return fail(absl::StrCat("gave a reply that is not a WitnessReply: ",
                             parsed.message()));
  }
  if (!reply.ok()) {
    // A refusal is not a broken pipe: the next head may be accepted, but
    // this one was not witnessed and the caller records that.
    return absl::FailedPreconditionError(
        absl::StrCat("witness \"", command_, "\" refused the head at seq ",
                     head.seq(), ": ", reply.error()));
  }
  return absl::OkStatus();
}

absl::Status WitnessClient::Finish() {
  to_child_.Reset();
  if (!WaitForExit(reply_timeout_)) {
    KillAndReap();
    return absl::DeadlineExceededError(
        absl::StrCat("witness \"", command_,
                     "\" did not exit after its input closed; killed"));
  }
  if (!WIFEXITED(wait_status_) || WEXITSTATUS(wait_status_) != 0) {
    return absl::UnavailableError(absl::StrCat(
        "witness \"", command_, "\" ", ipc::DescribeWaitStatus(wait_status_)));
  }
  return broken_;
}

absl::StatusOr<WitnessedHeads> ReadWitnessStore(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text,
                   ReadRegularFile(path, WitnessStoreFileOptions()));
  WitnessedHeads heads;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    if (line.empty()) continue;
    audit::WitnessHead head;
    absl::Status status =
        ParseJsonMessage(line, absl::StrCat(path, ":", line_number), &head);
    if (!status.ok()) {
      // A torn last line after a crash of the witness: it held nothing yet.
      if (line.data() + line.size() == text.data() + text.size()) break;
      return status;
    }
    heads[{head.dir(), head.log()}][head.seq()] = head.hash();
  }
  return heads;
}

absl::StatusOr<WitnessStore> WitnessStore::Open(const std::string& path) {
  ASSIGN_OR_RETURN(UniqueFd fd,
                   OpenRegularFile(path, WitnessStoreFileOptions(),
                                   O_RDWR | O_CREAT | O_APPEND, 0600));
  return WitnessStore(path, std::move(fd));
}

absl::Status WitnessStore::CatchUp() {
  struct stat st;
  if (::fstat(fd_.get(), &st) != 0) {
    return LastErrnoStatus(absl::StrCat("fstat(", path_, ")"));
  }
  if (st.st_size <= read_offset_) return absl::OkStatus();
  if (static_cast<uint64_t>(st.st_size - read_offset_) >
      WitnessStoreFileOptions().max_bytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat(path_, " grew by more than the ",
                     WitnessStoreFileOptions().max_bytes,
                     "-byte limit of a witness store since it was read"));
  }
  std::string text(static_cast<size_t>(st.st_size - read_offset_), '\0');
  ssize_t n = ::pread(fd_.get(), text.data(), text.size(), read_offset_);
  if (n != static_cast<ssize_t>(text.size())) {
    return LastErrnoStatus(absl::StrCat("pread(", path_, ")"));
  }
  size_t start = 0;
  for (;;) {
    size_t newline = text.find('\n', start);
    if (newline == std::string::npos) break;  // a torn line: ignored
    absl::string_view line(text.data() + start, newline - start);
    start = newline + 1;
    if (line.empty()) continue;
    audit::WitnessHead head;
    if (ParseJsonMessage(line, path_, &head).ok()) {
      heads_[{head.dir(), head.log()}][head.seq()] = head.hash();
    }
  }
  read_offset_ += static_cast<off_t>(start);
  return absl::OkStatus();
}

absl::Status WitnessStore::Accept(const audit::WitnessHead& head) {
  RETURN_IF_ERROR(CheckHead(head));
  // One witness at a time reads and appends, so two sessions sharing the
  // store cannot both accept conflicting heads.
  while (::flock(fd_.get(), LOCK_EX) != 0) {
    if (errno != EINTR)
      return LastErrnoStatus(absl::StrCat("flock(", path_, ")"));
  }
  struct Unlock {
    int fd;
    ~Unlock() { ::flock(fd, LOCK_UN); }
  } unlock{fd_.get()};
  RETURN_IF_ERROR(CatchUp());
  std::map<uint64_t, std::string>& held = heads_[{head.dir(), head.log()}];
  std::string name = absl::StrCat(head.dir(), "/", head.log());
  auto same_seq = held.find(head.seq());
  if (same_seq != held.end()) {
    if (same_seq->second == head.hash()) return absl::OkStatus();
    return absl::FailedPreconditionError(
        absl::StrCat(name, ": the head at seq ", head.seq(), " has hash ",
                     head.hash(), " but the witness holds ", same_seq->second,
                     " for that seq: the chain was rewritten"));
  }
  if (!held.empty()) {
    const auto& [last_seq, last_hash] = *held.rbegin();
    if (head.seq() < last_seq) {
      return absl::FailedPreconditionError(
          absl::StrCat(name, ": seq ", head.seq(),
                       " goes back: the witness "
                       "holds a head at seq ",
                       last_seq));
    }
    if (head.prev_seq() != last_seq || head.prev_hash() != last_hash) {
      return absl::FailedPreconditionError(absl::StrCat(
          name, ": the previous head sent (seq ", head.prev_seq(),
          ") is not the last head the witness holds (seq ", last_seq, ")"));
    }
  }
  std::string line = WitnessHeadJson(head) + "\n";
  struct stat st;
  if (::fstat(fd_.get(), &st) == 0 && st.st_size > read_offset_) {
    // The store ends in a torn line (a crash while writing): end it first.
    line = "\n" + line;
  }
  RETURN_IF_ERROR(WriteAll(fd_.get(), line));
  if (::fsync(fd_.get()) != 0) {
    return LastErrnoStatus(absl::StrCat("fsync(", path_, ")"));
  }
  read_offset_ += static_cast<off_t>(line.size());
  held[head.seq()] = head.hash();
  return absl::OkStatus();
}

absl::Status ServeWitness(int in, int out, WitnessStore& store) {
  std::string buffer;
  char chunk[65536];
  for (;;) {
    size_t newline;
    while ((newline = buffer.find('\n')) != std::string::npos) {
      std::string line = buffer.substr(0, newline);
      buffer.erase(0, newline + 1);
      audit::WitnessHead head;
      audit::WitnessReply reply;
      absl::Status status = ParseJsonMessage(line, "head", &head);
      if (status.ok()) status = store.Accept(head);
      if (status.ok()) {
        reply.set_ok(true);
      } else if (absl::IsFailedPrecondition(status) ||
                 absl::IsInvalidArgument(status)) {
        reply.set_error(std::string(status.message()));
      } else {
        return status;  // the store cannot be written: stop, loudly
      }
      RETURN_IF_ERROR(WriteAll(out, MessageToJsonLine(reply) + "\n"));
    }
    if (buffer.size() > kMaxWitnessLine) {
      return absl::InvalidArgumentError("a head line is over 64 KiB");
    }
    ssize_t n = ::read(in, chunk, sizeof(chunk));
    if (n < 0) {
      if (errno == EINTR) continue;
      return LastErrnoStatus("read(standard input)");
    }
    if (n == 0) return absl::OkStatus();
    buffer.append(chunk, static_cast<size_t>(n));
  }
}

}  // namespace garuda
