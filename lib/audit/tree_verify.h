// garuda-audit verify's check of a project's Merkle tree (docs/audit.md,
// "verify and the tree"): the tree against the lines of the logs, the
// signed checkpoint against the tree, and the checkpoints witnesses
// cosigned against both. Reads only; memory does not grow with the tree.
#ifndef GARUDA_LIB_AUDIT_TREE_VERIFY_H_
#define GARUDA_LIB_AUDIT_TREE_VERIFY_H_

#include <optional>
#include <string>
#include <vector>

#include "lib/crypto/note.h"
#include "proto/audit_log.pb.h"

namespace garuda {

// LogReport.log of the tree's report: no log can have this name.
inline constexpr char kTreeReportName[] = "(tree)";

inline constexpr char kStatusTreeMismatch[] = "tree_mismatch";
inline constexpr char kStatusRewritten[] = "rewritten";
inline constexpr char kStatusBadSignature[] = "bad_signature";
inline constexpr char kStatusNotWitnessed[] = "not_witnessed";

struct TreeVerifyOptions {
  std::string project_folder;  // ~/.garuda/audit/<dir>
  std::string dir;             // <dir>, for the report and the origin
  // The log's verifier key; unset: the copy in tree/key (the report says
  // so, since whoever can rewrite the logs can replace it).
  std::optional<NoteVerifier> log_key;
  // Each must have cosigned a checkpoint that agrees with the tree.
  std::vector<NoteVerifier> witness_keys;
};

// Nothing when the project has no tree.
std::optional<audit::LogReport> VerifyTree(const TreeVerifyOptions& options);

}  // namespace garuda

#endif  // GARUDA_LIB_AUDIT_TREE_VERIFY_H_
