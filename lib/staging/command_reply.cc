#include "lib/staging/command_reply.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <utility>

#include "absl/strings/string_view.h"
#include "lib/base/errno_status.h"
#include "lib/base/status_macros.h"
#include "lib/ipc/sealed_memfd.h"

namespace garuda {
namespace {

stager::CommandResult::Kind KindOf(RunResult::Kind kind) {
  switch (kind) {
    case RunResult::Kind::kExited:
      return stager::CommandResult::EXITED;
    case RunResult::Kind::kSignaled:
      return stager::CommandResult::SIGNALED;
    case RunResult::Kind::kSeccompKilled:
      return stager::CommandResult::SECCOMP_KILLED;
    case RunResult::Kind::kTimedOut:
      return stager::CommandResult::TIMED_OUT;
    case RunResult::Kind::kOutOfMemory:
      return stager::CommandResult::OUT_OF_MEMORY;
    case RunResult::Kind::kFailedToStart:
      return stager::CommandResult::FAILED_TO_START;
    case RunResult::Kind::kStopped:
      return stager::CommandResult::STOPPED;
  }
  return stager::CommandResult::KIND_UNSPECIFIED;
}

// The list as a frame stream in a memfd that nobody can change any more:
// sealed against writes, growing and shrinking, and against new seals;
// positioned at 0 for the reader.
absl::StatusOr<UniqueFd> SealedChangeSet(const ChangeSet& change_set) {
  return ipc::SealedMemfd("garuda-changeset", [&](int fd) {
    return WriteChangeSet(change_set, fd, "the change list (memfd)");
  });
}

// Up to `limit` bytes of the memfd `fd`; `truncated` when it holds more.
absl::Status TakeCaptured(int fd, size_t limit, std::string* data,
                          bool* truncated) {
  struct stat st;
  if (::fstat(fd, &st) != 0) return LastErrnoStatus("fstat captured output");
  size_t size = static_cast<size_t>(st.st_size);
  *truncated = size > limit;
  data->resize(std::min(size, limit));
  ssize_t got = ::pread(fd, data->data(), data->size(), 0);
  if (got < 0) return LastErrnoStatus("read captured output");
  data->resize(static_cast<size_t>(got));
  return absl::OkStatus();
}

}  // namespace

void FillResult(const RunResult& run, bool on_host,
                stager::CommandResult* result) {
  result->set_kind(KindOf(run.kind));
  result->set_exit_code(run.exit_code);
  result->set_signal(run.signal);
  result->set_description(run.Describe());
  result->set_stdout_data(run.stdout_data);
  result->set_stderr_data(run.stderr_data);
  result->set_stdout_truncated(run.stdout_truncated);
  result->set_stderr_truncated(run.stderr_truncated);
  result->set_on_host(on_host);
}

absl::Status PutChangeSet(const ChangeSet& change_set, int conflicts,
                          stager::CommandResult* result,
                          std::vector<UniqueFd>* reply_fds) {
  result->set_changed_files(change_set.changes.size());
  result->set_change_set_incomplete(change_set.summary.incomplete());
  result->set_conflicts(conflicts);
  if (!change_set.NoChanges()) {
    ASSIGN_OR_RETURN(UniqueFd fd, SealedChangeSet(change_set));
    reply_fds->push_back(std::move(fd));
    result->set_has_change_set(true);
  }
  return absl::OkStatus();
}

absl::StatusOr<RunResult> RunOnHostIntoFiles(RunOptions run,
                                             const std::string& directory) {
  UniqueFd out(::memfd_create("garuda-stdout", MFD_CLOEXEC));
  UniqueFd err(::memfd_create("garuda-stderr", MFD_CLOEXEC));
  if (!out || !err) return LastErrnoStatus("memfd_create for the output");
  std::fflush(stdout);
  std::fflush(stderr);
  UniqueFd saved_out(::fcntl(1, F_DUPFD_CLOEXEC, 3));
  UniqueFd saved_err(::fcntl(2, F_DUPFD_CLOEXEC, 3));
  if (!saved_out || !saved_err) return LastErrnoStatus("save stdout, stderr");
  absl::StatusOr<RunResult> ran = absl::InternalError("not run");
  if (::dup2(out.get(), 1) < 0 || ::dup2(err.get(), 2) < 0) {
    ran = LastErrnoStatus("dup2 the output memfds");
  } else {
    size_t limit = run.capture_limit;
    run.capture_output = false;  // the command writes the memfds
    // A watched command's live view: what the files gained, read between
    // two polls of the wait (the files are ours; the command only appends).
    uint64_t sent[2] = {0, 0};
    if (run.on_output) {
      const int files[2] = {out.get(), err.get()};
      auto forward = run.on_output;
      run.tick_ms = 100;
      run.on_tick = [files, forward, &sent] {
        for (int stream = 0; stream < 2; ++stream) {
          char buffer[65536];
          ssize_t n = ::pread(files[stream], buffer, sizeof buffer,
                              static_cast<off_t>(sent[stream]));
          if (n <= 0) continue;
          sent[stream] += static_cast<uint64_t>(n);
          forward(stream + 1,
                  absl::string_view(buffer, static_cast<size_t>(n)));
        }
      };
    }
    ran = RunOnHost(run, directory);
    absl::Status taken = absl::OkStatus();
    if (ran.ok()) {
      taken = TakeCaptured(out.get(), limit, &ran->stdout_data,
                           &ran->stdout_truncated);
    }
    if (ran.ok() && taken.ok()) {
      taken = TakeCaptured(err.get(), limit, &ran->stderr_data,
                           &ran->stderr_truncated);
    }
    if (!taken.ok()) ran = taken;
  }
  ::dup2(saved_out.get(), 1);
  ::dup2(saved_err.get(), 2);
  return ran;
}

}  // namespace garuda
