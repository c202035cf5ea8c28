// The writer of one audit log: the hash chain, grouped fsync, the
// checkpoint and the witness. Only garuda-auditor uses it.
//
// Durability: every line is written with write(2) as soon as it is
// appended (a crash of the auditor loses nothing already answered); fsync
// follows in groups of at most fsync_max_lines lines or fsync_max_ms
// milliseconds, and at once when a caller asks for durability. The
// checkpoint is written after the fsync it describes, so it never runs ahead
// of what is on disk. With a signing key the group's lines go into the
// project's tree after that fsync too; the tree is signed when a caller asks
// for durability and otherwise at most every fsync_max_ms (a durable signed
// checkpoint costs three more fsyncs), by the group or the timed sync.
#ifndef GARUDA_LIB_AUDIT_WRITER_H_
#define GARUDA_LIB_AUDIT_WRITER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "lib/audit/audit_config.h"
#include "lib/audit/tree_store.h"
#include "lib/audit/witness.h"
#include "lib/base/unique_fd.h"
#include "lib/crypto/note.h"
#include "proto/audit_log.pb.h"

namespace garuda {

struct WriterOptions {
  std::string audit_root;  // ~/.garuda/audit
  std::string project;     // the project folder
  std::string log_name;    // empty: DefaultLogName(now, pid)
  AuditConfig config;
  // The time written in each line; tests pin it.
  std::function<absl::Time()> clock = [] { return absl::Now(); };
  absl::Duration witness_timeout = absl::Seconds(30);
  // With config.checkpoint: the key that signs the project's tree (read by
  // the auditor before its lockdown). Null: no tree.
  std::shared_ptr<const NoteSigner> signer;
};

struct AppendResult {
  uint64_t first_seq = 0;
  uint64_t last_seq = 0;
  std::string hash;  // the head after these lines
  bool durable = false;
  std::vector<std::string> warnings;  // a witness failure, also in the log
};

class AuditWriter {
 public:
  // Creates the folders (0700) and a new log file (0600, O_EXCL: a log is
  // never reopened), writes the first checkpoint when that is on, and starts
  // the witness command. Call it before LockDown: it needs to create folders
  // and start a process with the rights the auditor gives up.
  static absl::StatusOr<std::unique_ptr<AuditWriter>> Open(
      const WriterOptions& options);
  ~AuditWriter();  // stops the timed sync; Close() is the clean end

  // Starts the thread that fsyncs a group when its oldest line is
  // fsync_max_ms old. Call it after LockDown, so that the thread is born
  // under the same Landlock and seccomp restrictions as the rest.
  void StartTimedSync();

  // Checks every event (ValidateEvent) first and writes nothing when one is
  // bad; then appends them in order. With `durable`, returns after fsync
  // and checkpoint. A failed write or fsync breaks the writer: every later
  // call returns that error.
  absl::StatusOr<AppendResult> Append(
      absl::Span<const audit::AuditEvent> events, bool durable);
  // fsync and checkpoint now.
  absl::StatusOr<AppendResult> Sync();
  // The end of the session: a "session_end" line, fsync, checkpoint, the
  // last head to the witness (a failure is recorded in the log and returned
  // as a warning). Later calls return the same head.
  absl::StatusOr<AppendResult> Close();

  const std::string& log_name() const { return log_name_; }
  const std::string& folder_name() const { return folder_name_; }
  const std::string& folder() const { return folder_; }
  const std::string& log_path() const { return log_path_; }
  const std::string& checkpoint_path() const { return checkpoint_path_; }
  // "<key name>/<project key>"; empty without a tree.
  const std::string& origin() const { return origin_; }

 private:
  AuditWriter() = default;
  absl::Status WriteEventsLocked(absl::Span<const audit::AuditEvent> events)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // fdatasync of the lines written since the last, then PublishLocked;
  // `sign_now`: sign the tree even if its last signature is younger than
  // fsyncMaxMs.
  absl::Status SyncLocked(bool sign_now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status WriteCheckpointLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // After the log's fdatasync: the group's leaves into the tree; with
  // `new_group` the log's checkpoint and with `sign` the tree's signed one
  // put in place durably.
  absl::Status PublishLocked(bool new_group, bool sign)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::string CheckpointTextLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status OpenTreeLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Sends the head to the witness when one is due (or `force`); a failure
  // is appended to the log as a "witness_failed" event and to `warnings`.
  absl::Status MaybeSendHeadLocked(bool force,
                                   std::vector<std::string>* warnings)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  AppendResult ResultLocked(uint64_t first_seq)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void TimedSyncLoop();

  WriterOptions options_;
  std::string log_name_, folder_name_, folder_, log_path_, checkpoint_path_;
  std::string origin_;

  absl::Mutex mu_;
  absl::CondVar changed_;
  UniqueFd fd_ ABSL_GUARDED_BY(mu_);
  uint64_t seq_ ABSL_GUARDED_BY(mu_) = 0;
  std::string head_ ABSL_GUARDED_BY(mu_);  // hash of the last line
  uint64_t synced_seq_ ABSL_GUARDED_BY(mu_) = 0;
  bool folder_synced_ ABSL_GUARDED_BY(mu_) = false;
  absl::Time oldest_unsynced_ ABSL_GUARDED_BY(mu_);
  absl::Status broken_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::string line_buffer_ ABSL_GUARDED_BY(mu_);
  uint64_t log_bytes_ ABSL_GUARDED_BY(mu_) = 0;  // where the next line goes
  std::unique_ptr<TreeAppender> tree_ ABSL_GUARDED_BY(mu_);
  // Lines written but not yet in the tree: they go in a group at a time,
  // after the log's fsync (a crash before is made good from the log).
  std::vector<TreeAppender::PendingLeaf> tree_pending_ ABSL_GUARDED_BY(mu_);
  // The log's seq up to which the tree's last signed checkpoint covers
  // this log, and when it was signed.
  uint64_t signed_seq_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Time last_signed_ ABSL_GUARDED_BY(mu_);

  std::unique_ptr<WitnessClient> witness_ ABSL_GUARDED_BY(mu_);
  uint64_t head_sent_seq_ ABSL_GUARDED_BY(mu_) = 0;
  std::string head_sent_hash_ ABSL_GUARDED_BY(mu_);
  uint64_t head_tried_seq_ ABSL_GUARDED_BY(mu_) = 0;

  std::thread timed_sync_;
};

}  // namespace garuda

#endif  // GARUDA_LIB_AUDIT_WRITER_H_
