#include "lib/agent/schedule.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "lib/agent/tool_calls.h"
#include "lib/base/json_syntax.h"
#include "lib/base/status_macros.h"
#include "lib/changeset/beneath.h"
#include "lib/jobs/scope.h"
#include "lib/tools/edit_tools.h"

namespace garuda {
namespace agent {
namespace {

// Marker file of a build, and the folders its builds write.
struct BuildOutputs {
  const char* marker;
  std::vector<const char*> folders;
};
const BuildOutputs kBuildOutputs[] = {
    {"Cargo.toml", {"target"}},
    {"pom.xml", {"target"}},
    {"build.gradle", {"build", ".gradle"}},
    {"build.gradle.kts", {"build", ".gradle"}},
    {"package.json", {"dist"}},
    {"pyproject.toml", {"build", "dist"}},
    {"setup.py", {"build", "dist"}},
    {"CMakeLists.txt", {"build"}},
};

bool Exists(int root_fd, const std::string& relative, bool* directory) {
  absl::StatusOr<UniqueFd> parent = OpenParentBeneath(root_fd, relative);
  if (!parent.ok()) return false;
  struct stat st;
  const std::string name = relative.substr(relative.rfind('/') + 1);
  if (::fstatat(parent->get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    return false;
  }
  *directory = S_ISDIR(st.st_mode);
  return S_ISDIR(st.st_mode) || S_ISREG(st.st_mode);
}

// An entry that a job file would accept and that no link leads to.
bool UsableEntry(const Project& project, const std::string& entry) {
  return jobs::CheckScopeEntry(entry).ok() &&
         jobs::CheckScopeInWorktree(project.fd(), {entry}).ok();
}

}  // namespace

const char kSchedulePrompt[] =
    "[Garuda /schedule] The person wants what we discussed to run as an "
    "unattended job: later, without them, in a worktree of its own, with "
    "no one to answer questions. Write the job's prompt: the complete "
    "instructions for that run, naming the files and folders it should "
    "change. Reply with the prompt text only; call no tools.";

std::vector<std::string> NamedPaths(
    const std::vector<provider::ChatMessage>& messages) {
  std::vector<std::string> paths;
  for (const provider::ChatMessage& message : messages) {
    for (const provider::ToolCall& call : message.tool_calls()) {
      google::protobuf::Struct arguments;
      if (!google::protobuf::util::JsonStringToMessage(call.arguments_json(),
                                                       &arguments)
               .ok()) {
        continue;
      }
      auto path = arguments.fields().find("path");
      if (path != arguments.fields().end() &&
          path->second.kind_case() == google::protobuf::Value::kStringValue) {
        paths.push_back(path->second.string_value());
      }
    }
  }
  return paths;
}

std::vector<std::string> ProposeScope(const Project& project,
                                      const std::vector<std::string>& paths,
                                      const std::string& text) {
  std::set<std::string> scope;
  std::vector<std::string> candidates = paths;
  // Words of the text that look like paths ("src/app/main.c", "README.md").
  for (absl::string_view word :
       absl::StrSplit(text, absl::ByAnyChar(" \t\n\r`'\"(),;:<>[]{}"),
                      absl::SkipEmpty())) {
    word = absl::StripSuffix(word, ".");
    if (absl::StrContains(word, '/') || absl::StrContains(word, '.')) {
      candidates.emplace_back(word);
    }
  }
  for (const std::string& given : candidates) {
    absl::StatusOr<std::string> relative = project.Relative(given);
    if (!relative.ok() || relative->empty()) continue;
    bool directory = false;
    if (!Exists(project.fd(), *relative, &directory)) continue;
    std::string entry = directory ? *relative
                        : relative->find('/') == std::string::npos
                            ? *relative
                            : relative->substr(0, relative->rfind('/'));
    if (UsableEntry(project, entry)) scope.insert(entry);
  }
  for (const BuildOutputs& build : kBuildOutputs) {
    bool directory = false;
    if (!Exists(project.fd(), build.marker, &directory) || directory) continue;
    for (const char* folder : build.folders) {
      if (UsableEntry(project, folder)) scope.insert(folder);
    }
  }
  // A folder already holds what is below it.
  std::vector<std::string> kept;
  for (const std::string& entry : scope) {
    if (!kept.empty() && absl::StartsWith(entry, kept.back() + "/")) continue;
    kept.push_back(entry);
  }
  return kept;
}

std::string ScheduledJobJson(const std::string& prompt,
                             const std::vector<std::string>& scope) {
  // Written out rather than printed from the proto: an empty scope must
  // stay in the file ("writeScope": [] means nothing writable, while a file
  // without the key is an old job that may write the whole worktree).
  std::vector<std::string> entries;
  for (const std::string& entry : scope) entries.push_back(JsonQuoted(entry));
  return absl::StrCat("{\n  \"prompt\": ", JsonQuoted(prompt),
                      ",\n  \"writeScope\": [", absl::StrJoin(entries, ", "),
                      "]\n}\n");
}

absl::Status ScheduleJob(const std::vector<provider::ChatMessage>& messages,
                         const SessionParts& parts,
                         const std::string& session_id,
                         const std::string& argument, const PromptTurn& turn) {
  Interaction& out = *parts.interaction;
  std::string name(absl::StripAsciiWhitespace(argument));
  if (name.empty()) name = "scheduled";
  if (!UsableEntry(*parts.project, name) || absl::StrContains(name, '/') ||
      name[0] == '.') {
    out.ShowNotice(absl::StrCat(
        "/schedule NAME: the job's name is one file name (letters, digits, "
        "'.', '_', '-'), not \"",
        name, "\""));
    return absl::OkStatus();
  }
  if (parts.model == nullptr) {
    out.ShowNotice("/schedule needs a model to write the job's prompt.");
    return absl::OkStatus();
  }
  // 1. The model writes the prompt.
  ASSIGN_OR_RETURN(WrittenPrompt written, turn(kSchedulePrompt));
  const std::string prompt(absl::StripAsciiWhitespace(written.answer));
  if (!written.answered || prompt.empty()) {
    out.ShowNotice(absl::StrCat("/schedule: no job prompt came back",
                                written.stopped.empty() ? "" : ": ",
                                written.stopped, "; nothing was written."));
    return absl::OkStatus();
  }
  // 2. Garuda proposes the scope.
  std::vector<std::string> scope =
      ProposeScope(*parts.project, NamedPaths(messages), prompt);
  const std::string relative = absl::StrCat(".garuda/jobs/", name, ".json");
  out.ShowNotice(absl::StrCat(
      "Proposed job ", relative, "\n  prompt: ", prompt, "\n  writeScope: ",
      scope.empty() ? "(nothing: the job's commands could write nothing)"
                    : absl::StrJoin(scope, ", "),
      "\ngaruda-applier asks you next; yes writes the job file. Run it with "
      "garuda-agent run ",
      name, "; edit the file to change the scope."));
  // 3. The applier's own question is the approval.
  WriteFileInput input;
  input.path = relative;
  input.content = ScheduledJobJson(prompt, scope);
  absl::StatusOr<ProposedEdit> proposed =
      ProposeWriteFile(*parts.project, input);
  if (!proposed.ok()) {
    out.ShowNotice(absl::StrCat("/schedule: ", proposed.status().message()));
    return absl::OkStatus();
  }
  ProposedChange change;
  change.origin = ProposedChange::Origin::kEdit;
  change.tool = kWriteFileRule;
  change.reason = absl::StrCat("/schedule ", name);
  change.session_id = session_id;
  change.change_set = &proposed->change_set;
  out.HandOverTerminal();
  absl::StatusOr<applier::ApplyOutcome> applied = parts.applier->Apply(change);
  out.TakeBackTerminal();
  if (!applied.ok()) {
    if (absl::IsUnavailable(applied.status())) return applied.status();
    out.ShowNotice(
        absl::StrCat("/schedule: not written: ", applied.status().message()));
    return parts.audit->Record(
        MakeEvent("schedule", kWriteFileRule, relative, "failed",
                  std::string(applied.status().message())));
  }
  const bool written_file = applied->kind() == applier::ApplyOutcome::APPLIED;
  RETURN_IF_ERROR(parts.audit->Record(MakeEvent(
      "schedule", kWriteFileRule, relative,
      written_file ? "applied" : "declined",
      applied->decision().empty() ? applied->line() : applied->decision())));
  out.ShowNotice(written_file ? absl::StrCat("Wrote ", relative,
                                             ". Run it: garuda-agent "
                                             "run ",
                                             name,
                                             "; schedule it: garuda-agent "
                                             "jobs timer ",
                                             name, " --on-calendar daily")
                              : absl::StrCat("Not written: ", applied->line()));
  return absl::OkStatus();
}

}  // namespace agent
}  // namespace garuda
