// Test doubles for the session: a scripted person (Interaction and
// LineSource), a stager that runs nothing but answers as scripted (its
// staged changes are real one-file change lists of the project), and an
// applier that is lib/apply in-process (real conflict checks, real writes).
// Like the real helpers, the fake stager and applier decide themselves
// through lib/consent: the scripted person answers their questions (as the
// person would on the terminal), or with `can_ask` false the rules alone
// decide.
#ifndef GARUDA_TESTS_AGENT_FAKES_H_
#define GARUDA_TESTS_AGENT_FAKES_H_

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "lib/agent/interaction.h"
#include "lib/agent/services.h"
#include "lib/consent/consent.h"
#include "lib/permissions/permissions.h"
#include "lib/tools/project.h"
#include "tests/providers/provider_script.pb.h"

namespace garuda {
namespace testing {

// A file of the test's runfiles (a program built for it).
std::string Runfile(const std::string& path);

// Scripted model answers: text only, or text and one tool call.
provider::ScriptedReply TextReply(const std::string& text,
                                  int64_t input_tokens = 100,
                                  int64_t output_tokens = 20);
provider::ScriptedReply ToolCallReply(const std::string& id,
                                      const std::string& name,
                                      const std::string& arguments_json);

class ScriptedPerson : public agent::Interaction {
 public:
  bool can_ask = true;
  std::deque<agent::PermissionAnswer> permission_answers;
  std::deque<Answer> change_answers;
  // Called when a permission question is asked, before it is answered
  // (a test changes a file "meanwhile" here).
  std::function<void(const agent::PermissionQuestion&)> on_permission;
  // Called with each piece of model text.
  std::function<void(absl::string_view)> on_text;

  std::string text;
  std::vector<std::string> notices;
  std::vector<std::string> retries;
  std::vector<agent::PermissionQuestion> permission_questions;
  std::vector<Rendered> change_questions;
  std::vector<agent::ToolOutcomeView> outcomes;

  bool CanAsk() const override { return can_ask; }
  void ShowText(absl::string_view piece) override;
  void ShowRetry(absl::string_view reason) override;
  void ShowToolCall(const agent::ToolCallView& call) override;
  void ShowToolOutcome(const agent::ToolOutcomeView& outcome) override;
  void ShowNotice(absl::string_view line) override;
  agent::PermissionAnswer AskPermission(
      const agent::PermissionQuestion& question) override;
  Answer AskChangeSet(const ChangeSet& change_set,
                      const Rendered& rendered) override;

  // All notices joined by newlines.
  std::string AllNotices() const;
};

// The consent of a fake helper: made at its first question, in the
// terminal mode when the person can answer then, from a copy of `rules`
// (the helper's own copy, as the real ones read theirs).
class FakeConsent {
 public:
  FakeConsent(ScriptedPerson* person, const Permissions* rules)
      : person_(person), rules_(rules) {}
  Consent& get();

 private:
  ScriptedPerson* person_;
  const Permissions* rules_;
  std::unique_ptr<Consent> consent_;
};

class ScriptedLines : public agent::LineSource {
 public:
  explicit ScriptedLines(std::vector<std::string> lines)
      : lines_(lines.begin(), lines.end()) {}
  std::optional<std::string> ReadLine(absl::string_view) override;

 private:
  std::deque<std::string> lines_;
};

// What a command "does" in the fake stager.
struct FakeCommand {
  stager::CommandResult result;
  // Staged mode: the command wrote these files (path -> new content).
  std::map<std::string, std::string> writes;
  // Called while the command "runs" (a test's Ctrl-C: it sets the turn's
  // CancelFlag).
  std::function<void()> during;
};

class FakeStager : public agent::CommandService {
 public:
  FakeStager(Project* project, stager::SessionDescription description,
             FakeConsent* consent)
      : project_(project),
        description_(std::move(description)),
        consent_(consent) {}
  // The command `command` answers as `fake`; unknown commands exit 0 with
  // no output.
  void Script(const std::string& command, FakeCommand fake) {
    script_[command] = std::move(fake);
  }

  std::vector<stager::RunCommand> runs;
  bool ended = false;

  absl::StatusOr<stager::SessionDescription> Describe() override {
    return description_;
  }
  // An on_host command runs only when the fake's consent agrees.
  absl::StatusOr<Ran> Run(const stager::RunCommand& command) override;
  absl::Status End() override {
    ended = true;
    return absl::OkStatus();
  }

 private:
  Ran RunScripted(const stager::RunCommand& command);

  Project* project_;
  stager::SessionDescription description_;
  FakeConsent* consent_;
  std::map<std::string, FakeCommand> script_;
};

class LocalApplier : public agent::ApplyService {
 public:
  LocalApplier(std::string project, std::string undo_root,
               FakeConsent* consent)
      : project_(std::move(project)),
        undo_root_(std::move(undo_root)),
        consent_(consent) {}
  std::vector<std::string> reasons;

  absl::StatusOr<applier::ApplyOutcome> Apply(
      const agent::ProposedChange& change) override;
  absl::StatusOr<applier::UndoOutcome> Undo(
      const std::string& undo_id, const std::string& session_id) override;

 private:
  std::string project_, undo_root_;
  FakeConsent* consent_;
};

// An audit sink that keeps the events (for sessions without an auditor).
class RecordingAudit : public agent::AuditSink {
 public:
  std::vector<audit::AuditEvent> events;
  absl::Status Record(const audit::AuditEvent& event) override {
    events.push_back(event);
    return absl::OkStatus();
  }
  absl::Status Close() override { return absl::OkStatus(); }
};

}  // namespace testing
}  // namespace garuda

#endif  // GARUDA_TESTS_AGENT_FAKES_H_
