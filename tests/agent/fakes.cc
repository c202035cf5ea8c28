#include "tests/agent/fakes.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/apply/apply.h"
#include "lib/base/files.h"
#include "lib/base/status_macros.h"
#include "lib/ipc/sealed_memfd.h"
#include "lib/question/question.h"
#include "lib/tools/edit_tools.h"

namespace garuda {
namespace testing {

std::string Runfile(const std::string& path) {
  return JoinPath(
      JoinPath(std::getenv("TEST_SRCDIR"), std::getenv("TEST_WORKSPACE")),
      path);
}

provider::ScriptedReply TextReply(const std::string& text, int64_t input_tokens,
                                  int64_t output_tokens) {
  provider::ScriptedReply reply;
  reply.set_text(text);
  reply.set_text_pieces(3);
  reply.set_input_tokens(input_tokens);
  reply.set_output_tokens(output_tokens);
  return reply;
}

provider::ScriptedReply ToolCallReply(const std::string& id,
                                      const std::string& name,
                                      const std::string& arguments_json) {
  provider::ScriptedReply reply = TextReply("Let me do that.", 120, 30);
  provider::ScriptedToolCall* call = reply.add_tool_calls();
  call->set_id(id);
  call->set_name(name);
  call->set_arguments_json(arguments_json);
  call->set_argument_pieces(2);
  return reply;
}

void ScriptedPerson::ShowText(absl::string_view piece) {
  text.append(piece.data(), piece.size());
  if (on_text) on_text(piece);
}
void ScriptedPerson::ShowRetry(absl::string_view reason) {
  retries.emplace_back(reason);
}
void ScriptedPerson::ShowToolCall(const agent::ToolCallView&) {}
void ScriptedPerson::ShowToolOutcome(const agent::ToolOutcomeView& outcome) {
  outcomes.push_back(outcome);
}
void ScriptedPerson::ShowNotice(absl::string_view line) {
  notices.emplace_back(line);
}
agent::PermissionAnswer ScriptedPerson::AskPermission(
    const agent::PermissionQuestion& question) {
  permission_questions.push_back(question);
  if (on_permission) on_permission(question);
  if (permission_answers.empty()) return agent::PermissionAnswer::kNo;
  agent::PermissionAnswer answer = permission_answers.front();
  permission_answers.pop_front();
  return answer;
}
Answer ScriptedPerson::AskChangeSet(const ChangeSet&,
                                    const Rendered& rendered) {
  change_questions.push_back(rendered);
  if (change_answers.empty()) return Answer::kDiscard;
  Answer answer = change_answers.front();
  change_answers.pop_front();
  return answer;
}
std::string ScriptedPerson::AllNotices() const {
  return absl::StrJoin(notices, "\n");
}

namespace {

class ScriptedAsker : public Asker {
 public:
  explicit ScriptedAsker(ScriptedPerson* person) : person_(person) {}
  PermissionAnswer AskPermission(const PermissionQuestion& question) override {
    return person_->AskPermission(question);
  }
  Answer AskChangeSet(const ChangeSet& change_set,
                      const Rendered& rendered) override {
    return person_->AskChangeSet(change_set, rendered);
  }

 private:
  ScriptedPerson* person_;
};

}  // namespace

Consent& FakeConsent::get() {
  if (consent_ == nullptr) {
    consent_ = std::make_unique<Consent>(
        person_->can_ask ? ConsentMode::kTerminal : ConsentMode::kRules,
        *rules_, std::make_unique<ScriptedAsker>(person_));
  }
  return *consent_;
}

std::optional<std::string> ScriptedLines::ReadLine(absl::string_view) {
  if (lines_.empty()) return std::nullopt;
  std::string line = lines_.front();
  lines_.pop_front();
  return line;
}

absl::StatusOr<agent::CommandService::Ran> FakeStager::Run(
    const stager::RunCommand& command) {
  std::string consent;
  if (command.on_host()) {
    ConsentDecision decision = consent_->get().ForHostCommand(
        command.command(), command.on_host_reason(), std::nullopt);
    if (!decision.yes) {
      return absl::PermissionDeniedError(
          absl::StrCat("not run on the host: ", decision.how));
    }
    consent = decision.how;
  }
  runs.push_back(command);
  Ran ran = RunScripted(command);
  ran.result.set_consent(consent);
  return ran;
}

agent::CommandService::Ran FakeStager::RunScripted(const stager::RunCommand& command) {
  Ran ran;
  auto found = script_.find(command.command());
  if (found == script_.end()) {
    ran.result.set_kind(stager::CommandResult::EXITED);
    ran.result.set_description("exited with code 0");
    ran.result.set_on_host(command.on_host());
    return ran;
  }
  if (found->second.during) found->second.during();
  ran.result = found->second.result;
  ran.result.set_on_host(command.on_host());
  if (description_.mode() == "staged" && !found->second.writes.empty()) {
    ChangeSet merged;
    for (const auto& [path, content] : found->second.writes) {
      WriteFileInput input;
      input.path = path;
      input.content = content;
      absl::StatusOr<ProposedEdit> edit = ProposeWriteFile(*project_, input);
      if (!edit.ok()) {
        ran.result.set_description(std::string(edit.status().message()));
        return ran;
      }
      if (merged.changes.empty()) {
        merged = std::move(edit->change_set);
      } else {
        for (Change& change : edit->change_set.changes) {
          merged.changes.push_back(std::move(change));
        }
      }
    }
    ran.result.set_has_change_set(true);
    ran.result.set_changed_files(merged.changes.size());
    // Sealed as the real stager seals it; the applier takes nothing else.
    absl::StatusOr<UniqueFd> sealed =
        ipc::SealedMemfd("fake-changeset", [&](int fd) {
          return WriteChangeSet(merged, fd, "the fake stager's list");
        });
    if (sealed.ok()) ran.sealed_change_set = *std::move(sealed);
    ran.change_set = std::move(merged);
  }
  return ran;
}

absl::StatusOr<applier::ApplyOutcome> LocalApplier::Apply(
    const agent::ProposedChange& change) {
  const ChangeSet& change_set = *change.change_set;
  if (change.origin == agent::ProposedChange::Origin::kCommand) {
    // The real applier refuses anything but a sealed memfd.
    RETURN_IF_ERROR(ipc::CheckSealed(change.sealed_fd, "the change list"));
  }
  UniqueFd root(::open(project_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  ConsentDecision decision =
      change.origin == agent::ProposedChange::Origin::kEdit
          ? consent_->get().ForEdit(change_set, change.tool, root.get(),
                                    std::nullopt)
          : consent_->get().ForCommandChanges(change_set, root.get(),
                                              std::nullopt);
  if (!decision.yes) {
    applier::ApplyOutcome declined;
    declined.set_kind(applier::ApplyOutcome::DECLINED);
    declined.set_decision(decision.how);
    declined.set_line(change.origin == agent::ProposedChange::Origin::kEdit
                          ? "The user said no to this edit."
                          : kDiscardedLine);
    return declined;
  }
  reasons.push_back(change.reason);
  ApplyOptions options;
  options.project = project_;
  options.undo_root = undo_root_;
  ASSIGN_OR_RETURN(ApplyResult result, ApplyChangeSet(change_set, options));
  applier::ApplyOutcome outcome;
  outcome.set_decision(decision.how);
  outcome.set_files(result.paths);
  outcome.set_undo_id(result.undo_id);
  switch (result.outcome) {
    case ApplyOutcome::kApplied:
      outcome.set_kind(applier::ApplyOutcome::APPLIED);
      outcome.set_line(absl::StrCat(kAppliedLine, " (", result.paths,
                                    result.paths == 1 ? " file)" : " files)"));
      break;
    case ApplyOutcome::kConflict:
      outcome.set_kind(applier::ApplyOutcome::CONFLICT);
      outcome.set_line(
          absl::StrCat("Conflict: ", absl::StrJoin(result.problems, "; "),
                       ". Nothing was applied."));
      for (const std::string& problem : result.problems) {
        outcome.add_conflicts(problem);
      }
      break;
    case ApplyOutcome::kRefused:
      outcome.set_kind(applier::ApplyOutcome::REFUSED);
      outcome.set_line(
          absl::StrCat("Refused: ", absl::StrJoin(result.problems, "; ")));
      break;
  }
  return outcome;
}

absl::StatusOr<applier::UndoOutcome> LocalApplier::Undo(const std::string&,
                                                        const std::string&) {
  // The newest apply of the project that was not undone.
  ASSIGN_OR_RETURN(std::vector<UndoRecordInfo> records,
                   ListUndoRecords(undo_root_, project_));
  auto last = std::find_if(
      records.begin(), records.end(),
      [](const UndoRecordInfo& record) { return record.undone_by.empty(); });
  if (last == records.end()) return absl::NotFoundError("nothing to undo");
  ApplyOptions options;
  options.project = project_;
  options.undo_root = undo_root_;
  ASSIGN_OR_RETURN(ApplyResult result, UndoApply(last->id, options));
  applier::UndoOutcome outcome;
  outcome.set_undo_id(result.undo_id);
  outcome.set_files(result.paths);
  outcome.set_line(absl::StrCat("Undone: ", result.paths, " file(s) restored"));
  return outcome;
}

}  // namespace testing
}  // namespace garuda
