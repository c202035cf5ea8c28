#include "lib/staging/workers.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "lib/base/errno_status.h"
#include "lib/base/files.h"
#include "lib/base/unique_fd.h"
#include "lib/lockdown/landlock.h"

namespace garuda {

SharedMemory::SharedMemory(size_t bytes) : size_(bytes == 0 ? 1 : bytes) {
  void* data = ::mmap(nullptr, size_, PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  data_ = data == MAP_FAILED ? nullptr : data;
}

SharedMemory::~SharedMemory() {
  if (data_ != nullptr) ::munmap(data_, size_);
}

absl::Status ConfineWritesBeneath(const std::string& path) {
  absl::StatusOr<int> abi = LandlockAbiVersion();
  if (!abi.ok() || *abi < 1) return absl::OkStatus();
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    return LastErrnoStatus("prctl(PR_SET_NO_NEW_PRIVS)");
  }
  LandlockRuleset ruleset = LandlockRuleset::ForWritesWithAbi(*abi, 1);
  ruleset.AllowWritesBeneath(path);
  absl::Status enforced = ruleset.Enforce();
  if (!enforced.ok()) {
    return absl::Status(
        enforced.code(),
        absl::StrCat("confine a worker to ", path, ": ", enforced.message()));
  }
  return absl::OkStatus();
}

absl::Status RunInProcesses(size_t processes,
                            const std::function<absl::Status()>& work,
                            std::atomic<uint32_t>* stop,
                            const std::function<absl::Status()>& enter_worker) {
  struct Child {
    pid_t pid = -1;
    UniqueFd report;  // an error's text, or nothing
  };
  std::vector<Child> children;
  pid_t parent = ::getpid();
  // A pipe or a process that cannot be made only means fewer workers:
  // this process takes whatever the others do not.
  for (size_t k = 1; k < processes; ++k) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) break;
    UniqueFd read_end(fds[0]), write_end(fds[1]);
    pid_t pid = ::fork();
    if (pid < 0) break;
    if (pid == 0) {
      // A worker never outlives the stager (a copy worker would write into
      // a folder that a later start removes).
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(1);
      read_end.Reset();
      absl::Status done = enter_worker ? enter_worker() : absl::OkStatus();
      if (done.ok()) done = work();
      if (!done.ok()) {
        if (stop != nullptr) stop->store(1);
        (void)WriteAll(write_end.get(), done.message());
      }
      ::_exit(done.ok() ? 0 : 1);
    }
    children.push_back({pid, std::move(read_end)});
  }
  absl::Status status = work();
  if (!status.ok() && stop != nullptr) stop->store(1);
  for (Child& child : children) {
    absl::StatusOr<std::string> report = ReadAll(child.report.get());
    int wait_status = 0;
    pid_t waited;
    do {
      waited = ::waitpid(child.pid, &wait_status, 0);
    } while (waited < 0 && errno == EINTR);
    if (!status.ok()) continue;
    // The report decides; the exit status only when there is none (a
    // worker that died without writing one).
    if (report.ok() && !report->empty()) {
      status = absl::InternalError(*report);
    } else if (!report.ok() ||
               (waited == child.pid &&
                !(WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0))) {
      status = absl::InternalError("a worker process ended without a report");
    }
  }
  return status;
}

}  // namespace garuda
