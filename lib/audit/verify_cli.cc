#include "lib/audit/verify_cli.h"

#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "lib/audit/json_records.h"
#include "lib/audit/paths.h"
#include "lib/audit/verify.h"
#include "lib/audit/witness.h"

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
  absl::StatusOr<std::vector<audit::LogReport>> reports =
      VerifyAuditLogs(verify);
  if (!reports.ok()) {
    std::fprintf(err, "garuda-audit verify: %s\n",
                 std::string(reports.status().message()).c_str());
    return 2;
  }
  int status = 0;
  for (const audit::LogReport& report : *reports) {
    std::string line =
        options.json ? LogReportJson(report) : FormatLogReport(report);
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

int RunWitness(const std::string& store_path, FILE* err) {
  if (store_path.empty()) {
    std::fprintf(err, "garuda-audit witness: --store FILE is required\n");
    return 2;
  }
  absl::StatusOr<WitnessStore> store = WitnessStore::Open(store_path);
  if (!store.ok()) {
    std::fprintf(err, "garuda-audit witness: %s\n",
                 std::string(store.status().message()).c_str());
    return 1;
  }
  absl::Status served = ServeWitness(STDIN_FILENO, STDOUT_FILENO, *store);
  if (!served.ok()) {
    std::fprintf(err, "garuda-audit witness: %s\n",
                 std::string(served.message()).c_str());
    return 1;
  }
  return 0;
}

}  // namespace garuda
