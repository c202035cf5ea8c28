#include "lib/audit/verify_cli.h"

#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "lib/audit/json_records.h"
#include "lib/audit/paths.h"
#include "lib/audit/verify.h"
#include "lib/audit/witness.h"
#include "lib/base/files.h"
#include "lib/base/visible.h"
#include "lib/crypto/note.h"

namespace garuda {

int RunVerify(const VerifyCliOptions& options, FILE* out, FILE* err) {
  VerifyOptions verify;
  absl::StatusOr<std::string> root = AuditRoot();
  if (!root.ok()) {
    std::fprintf(err, "garuda-audit: %s\n",
                 std::string(root.status().message()).c_str());
    return 2;
  }
  verify.audit_root = *root;
  verify.all = options.all;
  verify.project =
      options.project.empty() && !options.all ? "." : options.project;
  verify.witness_file = options.witness_file;
  if (!options.log_key.empty()) {
    absl::StatusOr<NoteVerifier> key = ParseNoteVerifier(options.log_key);
    if (!key.ok() || key->type != kNoteEd25519) {
      std::fprintf(err, "garuda-audit verify: --log-key: %s\n",
                   key.ok() ? "not a note signing key (type 0x01)"
                            : std::string(key.status().message()).c_str());
      return 2;
    }
    verify.log_key = *key;
  }
  for (const std::string& text : options.witness_keys) {
    absl::StatusOr<NoteVerifier> key = ParseNoteVerifier(text);
    if (!key.ok() || key->type != kNoteCosignatureV1) {
      std::fprintf(err, "garuda-audit verify: --witness-key: %s\n",
                   key.ok() ? "not a witness's cosigner key (type 0x04; "
                              "garuda-audit witness serve prints it)"
                            : std::string(key.status().message()).c_str());
      return 2;
    }
    verify.witness_keys.push_back(*key);
  }
  if (options.pause_fd >= 0) {
    // The test seam: say which log was read once, wait for the go-ahead.
    const int fd = options.pause_fd;
    verify.after_first_read = [fd](const std::string& path) {
      WriteAll(fd, absl::StrCat(path, "\n")).IgnoreError();
      char go;
      ReadExact(fd, &go, 1).IgnoreError();
    };
  }
  absl::StatusOr<std::vector<audit::LogReport>> reports =
      VerifyAuditLogs(verify);
  if (!reports.ok()) {
    std::fprintf(err, "garuda-audit verify: %s\n",
                 MakeMessageVisible(reports.status().message()).c_str());
    return 2;
  }
  int status = 0;
  for (const audit::LogReport& report : *reports) {
    // Names and messages can hold bytes of the files (a folder's name, a
    // checkpoint's log field): shown visibly, never raw.
    std::string line = options.json
                           ? LogReportJson(report)
                           : MakeMessageVisible(FormatLogReport(report));
    std::fprintf(out, "%s\n", line.c_str());
    if (report.status() == "unreadable") {
      status = status == 1 ? 1 : 2;
    } else if (IsFailure(report)) {
      status = 1;
    }
  }
  if (reports->empty() && !options.json) {
    std::fprintf(out, "no audit logs under %s%s\n", verify.audit_root.c_str(),
                 options.all ? "" : " for this project");
  }
  return status;
}

std::optional<WitnessStore> OpenWitnessStoreOrSay(const std::string& path,
                                                  FILE* err) {
  if (path.empty()) {
    std::fprintf(err, "garuda-audit witness: --store FILE is required\n");
    return std::nullopt;
  }
  absl::StatusOr<WitnessStore> store = WitnessStore::Open(path);
  if (!store.ok()) {
    std::fprintf(err, "garuda-audit witness: %s\n",
                 MakeMessageVisible(store.status().message()).c_str());
    return std::nullopt;
  }
  return std::move(store).value();
}

int RunWitness(WitnessStore& store, FILE* err) {
  absl::Status served = ServeWitness(STDIN_FILENO, STDOUT_FILENO, store);
  if (!served.ok()) {
    std::fprintf(err, "garuda-audit witness: %s\n",
                 MakeMessageVisible(served.message()).c_str());
    return 1;
  }
  return 0;
}

}  // namespace garuda
