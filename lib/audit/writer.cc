#include "lib/audit/writer.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <optional>

#include "absl/strings/str_cat.h"
#include "lib/audit/json_records.h"
#include "lib/audit/line_format.h"
#include "lib/audit/paths.h"
#include "lib/base/errno_status.h"
#include "lib/base/files.h"
#include "lib/base/status_macros.h"

namespace garuda {

absl::StatusOr<std::unique_ptr<AuditWriter>> AuditWriter::Open(
    const WriterOptions& options) {
  std::unique_ptr<AuditWriter> writer(new AuditWriter());
  writer->options_ = options;
  AuditConfig& config = writer->options_.config;
  if (config.fsync_max_lines == 0) config.fsync_max_lines = 1;
  if (config.checkpoint_every == 0) config.checkpoint_every = 1000;

  ASSIGN_OR_RETURN(writer->folder_name_,
                   ProjectAuditFolderName(options.project));
  writer->log_name_ = options.log_name;
  if (!writer->log_name_.empty())
    RETURN_IF_ERROR(CheckLogName(writer->log_name_));
  writer->folder_ = JoinPath(options.audit_root, writer->folder_name_);
  RETURN_IF_ERROR(MakePrivateFolder(options.audit_root));
  RETURN_IF_ERROR(MakePrivateFolder(writer->folder_));
  std::string checkpoints = JoinPath(writer->folder_, kCheckpointFolder);
  if (config.checkpoint) RETURN_IF_ERROR(MakePrivateFolder(checkpoints));

  // O_EXCL: a log belongs to one process and is never reopened; with a
  // default name a clash only means another random suffix.
  UniqueFd fd;
  for (int attempt = 0;; ++attempt) {
    std::string name = writer->log_name_.empty()
                           ? DefaultLogName(options.clock(), ::getpid())
                           : writer->log_name_;
    std::string path =
        JoinPath(writer->folder_, absl::StrCat(name, kLogSuffix));
    absl::StatusOr<UniqueFd> opened = OpenFile(
        path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_NOFOLLOW, 0600);
    if (opened.ok()) {
      fd = std::move(opened).value();
      writer->log_name_ = name;
      writer->log_path_ = path;
      break;
    }
    if (!absl::IsAlreadyExists(opened.status()) || !options.log_name.empty() ||
        attempt > 10) {
      if (absl::IsAlreadyExists(opened.status())) {
        return absl::AlreadyExistsError(absl::StrCat(
            "audit log ", path,
            " already exists: each writing process needs its own log name"));
      }
      return opened.status();
    }
  }
  if (::fchmod(fd.get(), 0600) != 0) {
    return LastErrnoStatus(absl::StrCat("fchmod(", writer->log_path_, ")"));
  }
  // Held for the writer's life: it tells another auditor's tree recovery
  // that this log's lines will reach the tree with this writer's groups.
  if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
    return LastErrnoStatus(absl::StrCat("flock(", writer->log_path_, ")"));
  }
  writer->checkpoint_path_ =
      JoinPath(checkpoints, absl::StrCat(writer->log_name_, kCheckpointSuffix));

  absl::MutexLock lock(&writer->mu_);
  writer->fd_ = std::move(fd);
  writer->head_ = GenesisHash(writer->log_name_);
  // The new file's name is durable before anything refers to it.
  RETURN_IF_ERROR(SyncParentDirectory(writer->log_path_));
  writer->folder_synced_ = true;
  if (config.checkpoint) RETURN_IF_ERROR(writer->WriteCheckpointLocked());
  if (config.checkpoint && options.signer != nullptr) {
    RETURN_IF_ERROR(writer->OpenTreeLocked());
  }
  if (!config.checkpoint_command.empty()) {
    ASSIGN_OR_RETURN(writer->witness_,
                     WitnessClient::Start(config.checkpoint_command,
                                          options.witness_timeout));
  }
  return writer;
}

absl::Status AuditWriter::OpenTreeLocked() {
  ASSIGN_OR_RETURN(tree_, TreeAppender::Open(folder_, log_name_));
  origin_ = absl::StrCat(options_.signer->name, "/", folder_name_);
  // The verifier key beside the tree, so that verify can check the
  // signature without flags; a reader who trusts a copy kept elsewhere more
  // gives it with --log-key.
  const std::string key_path = JoinPath(tree_->folder(), "key");
  const std::string key = absl::StrCat(
      FormatNoteVerifier(VerifierOf(*options_.signer, kNoteEd25519)), "\n");
  absl::StatusOr<std::string> existing = ReadRegularFile(key_path, {});
  if (!existing.ok() || *existing != key) {
    RETURN_IF_ERROR(WriteFileAtomically(key_path, key, 0600));
  }
  RETURN_IF_ERROR(tree_->WriteSignedCheckpoint(*options_.signer, origin_));
  last_signed_ = absl::Now();
  return absl::OkStatus();
}

AuditWriter::~AuditWriter() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
    changed_.SignalAll();
  }
  if (timed_sync_.joinable()) timed_sync_.join();
}

void AuditWriter::StartTimedSync() {
  if (timed_sync_.joinable()) return;
  // The thread takes no signals, so that Ctrl-C always interrupts the
  // thread that reads the input.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  timed_sync_ = std::thread([this] { TimedSyncLoop(); });
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

void AuditWriter::TimedSyncLoop() {
  absl::MutexLock lock(&mu_);
  const absl::Duration max_age =
      absl::Milliseconds(options_.config.fsync_max_ms);
  while (!stop_) {
    // Due: the fsync of lines fsyncMaxMs old, else the signature of a
    // tree whose last signature is fsyncMaxMs old.
    absl::Time due = absl::InfiniteFuture();
    if (!broken_.ok()) {
      // Nothing more to do; every call returns the error.
    } else if (seq_ != synced_seq_) {
      due = oldest_unsynced_ + max_age;
    } else if (tree_ != nullptr && signed_seq_ != synced_seq_) {
      due = last_signed_ + max_age;
    }
    if (due == absl::InfiniteFuture()) {
      changed_.Wait(&mu_);
      continue;
    }
    if (absl::Now() < due) {
      changed_.WaitWithDeadline(&mu_, due);
      continue;
    }
    // An error here is kept in broken_ and returned by the next call.
    (void)SyncLocked(/*sign_now=*/false);
  }
}

absl::Status AuditWriter::WriteEventsLocked(
    absl::Span<const audit::AuditEvent> events) {
  if (events.empty()) return absl::OkStatus();
  line_buffer_.clear();
  std::string head = head_;
  absl::Time now = options_.clock();
  const size_t pending_before = tree_pending_.size();
  for (size_t i = 0; i < events.size(); ++i) {
    const size_t start = line_buffer_.size();
    head = AppendAuditLine(seq_ + 1 + i, now, head, events[i], &line_buffer_);
    if (tree_ != nullptr) {
      // The leaf's hash now, while the line is at hand and its end known;
      // the tree takes it with the group.
      TreeAppender::LeafOfLine(
          absl::string_view(line_buffer_)
              .substr(start, line_buffer_.size() - start - 1),
          log_bytes_ + start, &tree_pending_);
    }
  }
  // One write for the batch. O_APPEND and a single writer keep lines whole
  // unless the process dies mid-write: that is the torn tail verify knows.
  absl::Status written = WriteAll(fd_.get(), line_buffer_);
  if (!written.ok()) {
    tree_pending_.resize(pending_before);
    broken_ = absl::Status(written.code(),
                           absl::StrCat(log_path_, ": ", written.message()));
    return broken_;
  }
  log_bytes_ += line_buffer_.size();
  if (seq_ == synced_seq_) {
    oldest_unsynced_ = absl::Now();
    changed_.Signal();
  }
  seq_ += events.size();
  head_ = head;
  return absl::OkStatus();
}

absl::Status AuditWriter::SyncLocked(bool sign_now) {
  RETURN_IF_ERROR(broken_);
  const bool new_group = seq_ != synced_seq_;
  if (new_group) {
    if (::fdatasync(fd_.get()) != 0) {
      // After a failed fsync the page cache cannot be trusted to hold the
      // lines: stop writing rather than go on with a hole.
      broken_ = LastErrnoStatus(absl::StrCat("fdatasync(", log_path_, ")"));
      return broken_;
    }
    synced_seq_ = seq_;
  }
  // A signature is due when a caller asks for durability (a durable
  // append, flush, close) or when the last one is fsyncMaxMs old: a
  // durable signed checkpoint costs three more fsyncs (its file, the
  // tree's entries, its folder), so under a steady stream the tree is signed at
  // the pace of the timed fsync rather than once per group.
  const bool sign =
      tree_ != nullptr && signed_seq_ != synced_seq_ &&
      (sign_now || absl::Now() - last_signed_ >=
                       absl::Milliseconds(options_.config.fsync_max_ms));
  if (!new_group && !sign) return absl::OkStatus();
  absl::Status published = PublishLocked(new_group, sign);
  if (!published.ok()) broken_ = published;
  return published;
}

absl::Status AuditWriter::PublishLocked(bool new_group, bool sign) {
  DurableFiles files;
  if (new_group && options_.config.checkpoint) {
    RETURN_IF_ERROR(files.Add(checkpoint_path_, CheckpointTextLocked(), 0600));
  }
  if (tree_ != nullptr) {
    // After the log's fdatasync (SyncLocked), so a signed checkpoint never
    // covers a line that a power failure could take back. The tree's own
    // entries are not synced here: they are derived from the lines, and
    // the next open cuts back what a power failure tore
    // (TreeAppender::Open). They are synced with each signed checkpoint. Under
    // the lock of every auditor of the project: the tree's order is the order
    // in which their groups reach it, and a checkpoint is never renamed over a
    // larger one.
    absl::Status added = [&]() -> absl::Status {
      ASSIGN_OR_RETURN(TreeAppender::Lock lock, tree_->LockAndCatchUp());
      RETURN_IF_ERROR(tree_->AppendLeaves(tree_pending_));
      tree_pending_.clear();
      RETURN_IF_ERROR(tree_->SyncWhenDue());
      if (!sign) return absl::OkStatus();
      // Both checkpoints in one commit: the second file's and the second
      // folder's fsync find their changes committed by the first.
      RETURN_IF_ERROR(
          tree_->AddSignedCheckpoint(*options_.signer, origin_, &files));
      RETURN_IF_ERROR(files.Commit());
      return tree_->CheckpointCommitted();
    }();
    if (!added.ok()) {
      return absl::Status(added.code(),
                          absl::StrCat(tree_->folder(), ": ", added.message()));
    }
    if (sign) {
      signed_seq_ = synced_seq_;
      last_signed_ = absl::Now();
    }
  }
  return files.Commit();
}

std::string AuditWriter::CheckpointTextLocked() {
  audit::AuditCheckpoint checkpoint;
  checkpoint.set_log(log_name_);
  checkpoint.set_seq(synced_seq_);
  checkpoint.set_hash(head_);
  // Only the head: no target or reason text leaves the log.
  return CheckpointJson(checkpoint) + "\n";
}

absl::Status AuditWriter::WriteCheckpointLocked() {
  return WriteFileAtomically(checkpoint_path_, CheckpointTextLocked(), 0600);
}

absl::Status AuditWriter::MaybeSendHeadLocked(
    bool force, std::vector<std::string>* warnings) {
  if (witness_ == nullptr || seq_ == 0 || seq_ == head_tried_seq_) {
    return absl::OkStatus();
  }
  const uint64_t every = options_.config.checkpoint_every;
  if (!force && seq_ / every == head_tried_seq_ / every)
    return absl::OkStatus();
  // A witnessed head must be on disk: otherwise a crash would look like a
  // rollback.
  RETURN_IF_ERROR(SyncLocked(/*sign_now=*/false));
  audit::WitnessHead head;
  head.set_dir(folder_name_);
  head.set_log(log_name_);
  head.set_seq(seq_);
  head.set_hash(head_);
  head.set_prev_seq(head_sent_seq_);
  head.set_prev_hash(head_sent_hash_);
  absl::Status sent = witness_->Send(head);
  head_tried_seq_ = seq_;
  if (sent.ok()) {
    head_sent_seq_ = seq_;
    head_sent_hash_ = head_;
    return absl::OkStatus();
  }
  // Never skipped in silence: the failure becomes a line of the chain and a
  // warning for the client. The next due head is tried again.
  std::string message(sent.message());
  warnings->push_back(message);
  audit::AuditEvent failed;
  failed.set_kind("witness_failed");
  failed.set_tool("garuda-auditor");
  failed.set_target(absl::StrCat(log_name_, "@", seq_));
  failed.set_decision("not witnessed");
  failed.set_reason(message);
  RETURN_IF_ERROR(WriteEventsLocked({failed}));
  // The failure line itself is not a reason for another head.
  head_tried_seq_ = seq_;
  return SyncLocked(/*sign_now=*/false);
}

AppendResult AuditWriter::ResultLocked(uint64_t first_seq) {
  AppendResult result;
  result.first_seq = first_seq;
  result.last_seq = seq_;
  result.hash = head_;
  result.durable = synced_seq_ == seq_;
  return result;
}

absl::StatusOr<AppendResult> AuditWriter::Append(
    absl::Span<const audit::AuditEvent> events, bool durable) {
  for (size_t i = 0; i < events.size(); ++i) {
    absl::Status valid = ValidateEvent(events[i]);
    if (!valid.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("event ", i + 1, ": ", valid.message()));
    }
  }
  absl::MutexLock lock(&mu_);
  RETURN_IF_ERROR(broken_);
  if (closed_) return absl::FailedPreconditionError("the audit log is closed");
  uint64_t first = seq_ + 1;
  // A group never holds more than fsync_max_lines lines, even within one
  // batch of events.
  const uint64_t max_lines = options_.config.fsync_max_lines;
  size_t done = 0;
  while (done < events.size()) {
    size_t room = static_cast<size_t>(max_lines - (seq_ - synced_seq_));
    size_t count = std::min(room, events.size() - done);
    RETURN_IF_ERROR(WriteEventsLocked(events.subspan(done, count)));
    done += count;
    if (seq_ - synced_seq_ >= max_lines) {
      RETURN_IF_ERROR(SyncLocked(/*sign_now=*/false));
    }
  }
  std::vector<std::string> warnings;
  if (durable) RETURN_IF_ERROR(SyncLocked(/*sign_now=*/true));
  RETURN_IF_ERROR(MaybeSendHeadLocked(/*force=*/false, &warnings));
  AppendResult result = ResultLocked(first);
  result.warnings = std::move(warnings);
  return result;
}

absl::StatusOr<AppendResult> AuditWriter::Sync() {
  absl::MutexLock lock(&mu_);
  RETURN_IF_ERROR(SyncLocked(/*sign_now=*/true));
  return ResultLocked(seq_ + 1);
}

absl::StatusOr<AppendResult> AuditWriter::Close() {
  absl::MutexLock lock(&mu_);
  RETURN_IF_ERROR(broken_);
  std::vector<std::string> warnings;
  if (!closed_) {
    closed_ = true;
    // The last line says the log was closed, so that verify can tell a
    // checkpoint put back from a crash before the last checkpoint.
    audit::AuditEvent end;
    end.set_kind(kSessionEndKind);
    end.set_tool("garuda-auditor");
    end.set_target(log_name_);
    RETURN_IF_ERROR(WriteEventsLocked({end}));
    RETURN_IF_ERROR(SyncLocked(/*sign_now=*/true));
    if (tree_ != nullptr) {
      // The tree's entries synced too, so the next open has nothing of
      // this session's to check.
      absl::Status synced = [&]() -> absl::Status {
        ASSIGN_OR_RETURN(TreeAppender::Lock tree_lock, tree_->LockAndCatchUp());
        return tree_->Sync();
      }();
      if (!synced.ok()) {
        broken_ = synced;
        return broken_;
      }
    }
    RETURN_IF_ERROR(MaybeSendHeadLocked(/*force=*/true, &warnings));
    if (witness_ != nullptr) {
      absl::Status finished = witness_->Finish();
      if (!finished.ok() && warnings.empty()) {
        warnings.push_back(std::string(finished.message()));
      }
    }
  }
  AppendResult result = ResultLocked(seq_ + 1);
  result.warnings = std::move(warnings);
  return result;
}

}  // namespace garuda
