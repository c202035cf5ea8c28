#include "lib/base/home.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "lib/base/files.h"
#include "lib/base/sha256.h"

namespace garuda {

absl::StatusOr<std::string> RealProjectRoot(const std::string& project) {
  return RealPath(project.empty() ? "." : project, "project folder");
}

std::string ProjectHash(absl::string_view real_project) {
  return Sha256Hex(real_project).substr(0, 16);
}

std::string ProjectKey(absl::string_view real_project) {
  std::string name = Basename(real_project);
  if (name.empty()) name = "root";
  for (char& c : name) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '.' &&
        c != '_' && c != '-') {
      c = '_';
    }
  }
  if (name[0] == '.') name[0] = '_';
  if (name.size() > 64) name.resize(64);
  return absl::StrCat(name, "-", ProjectHash(real_project));
}

absl::Status CheckSessionId(absl::string_view session_id) {
  bool valid =
      !session_id.empty() && session_id.size() <= 128 && session_id[0] != '.';
  for (char c : session_id) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '.' &&
        c != '_' && c != '-') {
      valid = false;
    }
  }
  if (valid) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "session id \"", session_id,
      "\" must be 1 to 128 letters, digits, '.', '_' or '-', not starting "
      "with '.'"));
}

std::string GarudaFolder(absl::string_view home) {
  return JoinPath(home, ".garuda");
}

std::string GarudaAuditRoot(absl::string_view home) {
  return JoinPath(GarudaFolder(home), "audit");
}

std::string GarudaStagingRoot(absl::string_view home) {
  return JoinPath(GarudaFolder(home), "staging");
}

std::string GarudaUndoRoot(absl::string_view home) {
  return JoinPath(GarudaFolder(home), "undo");
}

absl::StatusOr<std::string> GarudaSessionFolder(absl::string_view home,
                                                absl::string_view session_id) {
  absl::Status checked = CheckSessionId(session_id);
  if (!checked.ok()) return checked;
  return JoinPath(JoinPath(GarudaFolder(home), "sessions"), session_id);
}

std::string SessionJournalFile(absl::string_view session_folder) {
  return JoinPath(session_folder, "journal.jsonl");
}

std::string BudgetJournalFile(absl::string_view session_folder) {
  return JoinPath(session_folder, "budget.jsonl");
}

std::string ManagedPolicyFile(absl::string_view managed_folder) {
  return JoinPath(managed_folder, "policy.json");
}

std::string UserPolicyFile(absl::string_view home) {
  return JoinPath(GarudaFolder(home), "policy.json");
}

std::string UserSettingsFile(absl::string_view home) {
  return JoinPath(GarudaFolder(home), "settings.json");
}

std::string ProjectSettingsFile(absl::string_view project) {
  return JoinPath(JoinPath(project, ".garuda"), "settings.json");
}

std::string UserInstructionsFile(absl::string_view home) {
  return JoinPath(GarudaFolder(home), "AGENTS.md");
}

std::string ProjectJobFile(absl::string_view checkout, absl::string_view job) {
  return JoinPath(JoinPath(JoinPath(checkout, ".garuda"), "jobs"),
                  absl::StrCat(job, ".json"));
}

}  // namespace garuda
