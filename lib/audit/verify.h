// garuda-audit verify: reads logs, checkpoints and (optionally) a witness
// store; never writes. One LogReport per log.
#ifndef GARUDA_LIB_AUDIT_VERIFY_H_
#define GARUDA_LIB_AUDIT_VERIFY_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lib/audit/witness.h"
#include "lib/base/files.h"
#include "lib/crypto/note.h"
#include "proto/audit_log.pb.h"

namespace garuda {

// Status names of LogReport.status.
inline constexpr char kStatusOk[] = "ok";
inline constexpr char kStatusTornTail[] = "torn_tail";
inline constexpr char kStatusModified[] = "modified";
inline constexpr char kStatusChainBroken[] = "chain_broken";
inline constexpr char kStatusCut[] = "cut";
inline constexpr char kStatusDeleted[] = "deleted";
inline constexpr char kStatusCheckpointMismatch[] = "checkpoint_mismatch";
inline constexpr char kStatusCheckpointBehind[] = "checkpoint_behind";
inline constexpr char kStatusWitnessMismatch[] = "witness_mismatch";
inline constexpr char kStatusNotJson[] = "not_json";
inline constexpr char kStatusUnknownVersion[] = "unknown_version";
inline constexpr char kStatusUnreadable[] = "unreadable";

// Verifies the bytes of one log (garuda-audit reads a log in pieces through
// the same checks, in bounded memory). `checkpoint` and `witnessed` (seq ->
// hash) are compared when given. Fills status, message and the counters; the
// caller sets dir.
audit::LogReport VerifyLogContent(
    absl::string_view content, absl::string_view log_name,
    const audit::AuditCheckpoint* checkpoint,
    const std::map<uint64_t, std::string>* witnessed);

struct VerifyOptions {
  std::string audit_root;    // ~/.garuda/audit
  std::string project;       // verify this project's logs ...
  bool all = false;          // ... or every project's
  std::string witness_file;  // empty: no witness
  // The project's tree (tree/): the log's verifier key (unset: tree/key)
  // and the witnesses whose cosignatures must be there and agree.
  std::optional<NoteVerifier> log_key;
  std::vector<NoteVerifier> witness_keys;
  // Tests only: called with a log's path after its first read, so a test
  // can cut the log at a known point of the read.
  std::function<void(const std::string& log_path)> after_first_read;
};

// A checkpoint is small and never a link (one linked to /etc/passwd is
// refused without a byte of the target read).
inline constexpr size_t kMaxCheckpointBytes = 64 << 10;
inline RegularFileOptions CheckpointFileOptions() {
  RegularFileOptions options;
  options.max_bytes = kMaxCheckpointBytes;
  return options;
}

// Every log of the project (or all projects), sorted by folder and name,
// including logs known only from a checkpoint or the witness (deleted).
// Errors: a witness file that cannot be read, an audit folder that cannot be
// listed.
absl::StatusOr<std::vector<audit::LogReport>> VerifyAuditLogs(
    const VerifyOptions& options);

// ok and torn_tail are not failures; unreadable is its own kind (exit 2).
bool IsFailure(const audit::LogReport& report);
// "<dir>/<log>: <status>: <message>"
std::string FormatLogReport(const audit::LogReport& report);

}  // namespace garuda

#endif  // GARUDA_LIB_AUDIT_VERIFY_H_
