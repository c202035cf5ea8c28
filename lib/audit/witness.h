// The witness: a process outside the user's reach that keeps the heads of
// the audit chains, so that a rewrite or a rollback of a log together with
// its checkpoint shows (docs/audit.md, "Witness").
//
// Protocol, one JSON object per line: the auditor writes a WitnessHead to the
// command's standard input and reads one WitnessReply line from its standard
// output before it goes on.
#ifndef GARUDA_LIB_AUDIT_WITNESS_H_
#define GARUDA_LIB_AUDIT_WITNESS_H_

#include <sys/types.h>

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "lib/base/files.h"
#include "lib/base/unique_fd.h"
#include "proto/audit_witness.pb.h"

namespace garuda {

// A witness store is named by the person (--witness, --store): a link is
// followed, the target must be a regular file of at most 256 MiB.
inline RegularFileOptions WitnessStoreFileOptions() {
  RegularFileOptions options;
  options.follow_links = true;
  options.max_bytes = kMaxJournalFileBytes;
  return options;
}

// The auditor's side: one long-lived child, `/bin/sh -c COMMAND`, started
// once per session BEFORE the auditor locks itself down, so that the command
// keeps the rights it needs (the network for ssh, another user through sudo)
// that the locked-down auditor no longer has.
class WitnessClient {
 public:
  // The child's standard error stays the auditor's. Ignores SIGPIPE in this
  // process, so that a witness that died is an error, not a crash.
  static absl::StatusOr<std::unique_ptr<WitnessClient>> Start(
      const std::string& command, absl::Duration reply_timeout);
  ~WitnessClient();  // kills and reaps a child that is still running

  // Sends one head and waits for its reply. Errors: the witness refused the
  // head (with its reason), died, closed its output, or did not answer in
  // time. After an error every later Send fails at once.
  absl::Status Send(const audit::WitnessHead& head);
  // Closes the child's input and waits for it to exit (kills it after the
  // reply timeout). An exit status other than 0 is an error.
  absl::Status Finish();

  const std::string& command() const { return command_; }

 private:
  WitnessClient(std::string command, pid_t pid, UniqueFd to_child,
                UniqueFd from_child, absl::Duration reply_timeout);
  absl::StatusOr<std::string> ReadReplyLine();
  // True once the child has exited and been reaped (within `timeout`).
  bool WaitForExit(absl::Duration timeout);
  void KillAndReap();
  std::string ExitDescription();

  std::string command_;
  pid_t pid_;
  UniqueFd to_child_;
  UniqueFd from_child_;
  absl::Duration reply_timeout_;
  std::string buffer_;
  absl::Status broken_;
  bool reaped_ = false;
  int wait_status_ = 0;
};

// The heads a witness store holds: (folder, log) -> seq -> hash.
using WitnessedHeads = std::map<std::pair<std::string, std::string>,
                                std::map<uint64_t, std::string>>;

// Reads a store file (JSON lines of WitnessHead) for verify --witness.
absl::StatusOr<WitnessedHeads> ReadWitnessStore(const std::string& path);

// The reference witness: `garuda-audit witness --store FILE`. Accepts a head
// only when its seq does not go back, when it agrees with any head held for
// the same seq, and when its prev_seq/prev_hash are the last head held for
// that log; accepted heads are appended to the store (fsync) before the
// reply. Several witnesses may share one store: each head is checked and
// written under an exclusive flock, after reading what others appended.
class WitnessStore {
 public:
  static absl::StatusOr<WitnessStore> Open(const std::string& path);
  // OK: accepted and on disk. FAILED_PRECONDITION: refused, with the reason.
  absl::Status Accept(const audit::WitnessHead& head);

 private:
  WitnessStore(std::string path, UniqueFd fd)
      : path_(std::move(path)), fd_(std::move(fd)) {}
  absl::Status CatchUp();  // reads heads appended since the last read

  std::string path_;
  UniqueFd fd_;
  off_t read_offset_ = 0;
  WitnessedHeads heads_;
};

// Serves heads from `in` to `out` until end of input; returns an error only
// when the store cannot be written or `out` is gone.
absl::Status ServeWitness(int in, int out, WitnessStore& store);

}  // namespace garuda

#endif  // GARUDA_LIB_AUDIT_WITNESS_H_
