#include "lib/consent/consent.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/base/files.h"
#include "lib/base/status_macros.h"
#include "lib/base/visible.h"
#include "lib/changeset/rules.h"
#include "lib/consent/terminal_turn.h"
#include "lib/policy/sources.h"
#include "lib/question/screen.h"

namespace garuda {
namespace {

class TerminalAsker : public Asker {
 public:
  explicit TerminalAsker(UniqueFd terminal) : terminal_(std::move(terminal)) {}

  PermissionAnswer AskPermission(const PermissionQuestion& question) override {
    TerminalTurn turn(terminal_.get());
    return garuda::AskPermission(question, terminal_.get(), terminal_.get());
  }

  Answer AskChangeSet(const ChangeSet& change_set,
                      const Rendered& rendered) override {
    TerminalTurn turn(terminal_.get());
    return Ask(change_set, rendered, terminal_.get(), terminal_.get());
  }

  ChangeAnswer AskChanges(const ChangeSet& change_set,
                          const Rendered& rendered) override {
    TerminalTurn turn(terminal_.get());
    AskOptions options;
    options.color = TerminalHasColors(terminal_.get());
    return garuda::AskChanges(change_set, rendered, terminal_.get(),
                              terminal_.get(), options);
  }

 private:
  UniqueFd terminal_;
};

// No, because nobody could answer: a person may still review the list.
ConsentDecision NobodyCouldAnswer(absl::string_view why) {
  ConsentDecision decision{
      false, absl::StrCat("no person to ask, and ", why, ": discard")};
  decision.no_person = true;
  return decision;
}

std::string RelayedHow(const RelayedConsent& relayed) {
  return absl::StrCat("answer relayed by garuda-agent from ",
                      relayed.from.empty() ? "an unnamed source" : relayed.from,
                      relayed.yes ? ": yes" : ": no");
}

std::string AllowedHow(const Decision& decision) {
  return absl::StrCat("allowed by ",
                      decision.allowed_by.empty()
                          ? decision.reason
                          : absl::StrJoin(decision.allowed_by, ", "));
}

}  // namespace

absl::StatusOr<ConsentMode> ParseConsentMode(absl::string_view text) {
  if (text == "rules") return ConsentMode::kRules;
  if (text == "terminal") return ConsentMode::kTerminal;
  if (text == "relayed") return ConsentMode::kRelayed;
  return absl::InvalidArgumentError(
      absl::StrCat("--consent: \"", text,
                   "\" is not \"rules\", \"terminal\" or \"relayed\""));
}

const char* ConsentModeName(ConsentMode mode) {
  switch (mode) {
    case ConsentMode::kRules:
      return "rules";
    case ConsentMode::kTerminal:
      return "terminal";
    case ConsentMode::kRelayed:
      return "relayed";
  }
  return "rules";
}

absl::StatusOr<std::unique_ptr<Asker>> OpenTerminalAsker(
    const std::string& path) {
  // O_NOCTTY: the helper must never become the terminal's session leader;
  // it borrows the agent's controlling terminal for one question at a time.
  absl::StatusOr<UniqueFd> terminal =
      OpenFile(path, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (!terminal.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("--consent=terminal: cannot open the terminal ", path,
                     ": ", terminal.status().message(),
                     " (without a terminal, start with --consent=rules)"));
  }
  if (!::isatty(terminal->get())) {
    return absl::FailedPreconditionError(
        absl::StrCat("--consent=terminal: ", path, " is not a terminal"));
  }
  return std::unique_ptr<Asker>(new TerminalAsker(*std::move(terminal)));
}

absl::StatusOr<std::unique_ptr<Consent>> Consent::Open(
    const ConsentOptions& options, const std::string& project) {
  // The rules as the helper reads them, not as the agent sent them: the
  // same four sources and the same precedence as the agent's.
  ASSIGN_OR_RETURN(SettingsSources sources,
                   LoadSettingsSources(DefaultSettingsLocations(project)));
  ASSIGN_OR_RETURN(LoadedPermissions loaded, LoadPermissions(sources));
  if (!options.extra_rules_source.empty()) {
    RETURN_IF_ERROR(loaded.permissions.AddRules(options.extra_rules,
                                                options.extra_rules_source));
  }
  std::unique_ptr<Asker> asker;
  if (options.mode == ConsentMode::kTerminal) {
    ASSIGN_OR_RETURN(asker, OpenTerminalAsker(options.terminal));
  }
  auto consent = std::make_unique<Consent>(
      options.mode, std::move(loaded.permissions), std::move(asker));
  RETURN_IF_ERROR(consent->SetApplyStaged(options.apply_staged));
  return consent;
}

absl::Status Consent::SetApplyStaged(bool apply_staged) {
  if (apply_staged && mode_ != ConsentMode::kRules) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--apply-staged is for a session without a person (--consent=rules); "
        "with --consent=",
        ConsentModeName(mode_), " the ",
        mode_ == ConsentMode::kTerminal ? "person" : "relayed answer",
        " decides"));
  }
  apply_staged_ = apply_staged;
  return absl::OkStatus();
}

Consent::Consent(ConsentMode mode, Permissions permissions,
                 std::unique_ptr<Asker> asker)
    : mode_(mode),
      permissions_(std::move(permissions)),
      asker_(std::move(asker)) {
  if (mode_ == ConsentMode::kTerminal && asker_ == nullptr) {
    mode_ = ConsentMode::kRules;  // nobody to ask: the rules alone
  }
}

ConsentDecision Consent::Relayed(const std::optional<RelayedConsent>& relayed) {
  if (!relayed) return {false, "no answer was relayed: no"};
  return {relayed->yes, RelayedHow(*relayed)};
}

ConsentDecision Consent::Decide(const PermissionRequest& request,
                                const PermissionQuestion& question,
                                const std::optional<RelayedConsent>& relayed) {
  Decision decision = permissions_.Decide(request);
  if (decision.verdict == Verdict::kDeny) return {false, decision.reason};
  if (decision.verdict == Verdict::kAllow) return {true, AllowedHow(decision)};
  switch (mode_) {
    case ConsentMode::kTerminal: {
      PermissionQuestion asked = question;
      if (decision.verdict == Verdict::kAsk && !decision.reason.empty()) {
        asked.detail = absl::StrCat(decision.reason, "\n", asked.detail);
      }
      asked.session_rule = Permissions::SessionRuleFor(request);
      PermissionAnswer answer = asker_->AskPermission(asked);
      if (answer == PermissionAnswer::kNo) return {false, "asked: no"};
      if (answer == PermissionAnswer::kYesForSession && asked.session_rule &&
          permissions_.RememberForSession(*asked.session_rule).ok()) {
        return {true, absl::StrCat("asked: yes, and for this session: ",
                                   *asked.session_rule)};
      }
      return {true, "asked: yes"};
    }
    case ConsentMode::kRelayed:
      return Relayed(relayed);
    case ConsentMode::kRules:
      break;
  }
  return {false,
          decision.verdict == Verdict::kAsk
              ? absl::StrCat("no person to ask (", decision.reason, "): no")
              : "no person to ask and no allow rule: no"};
}

bool Consent::MayAgreeToHostCommands() const {
  if (mode_ != ConsentMode::kRules) return true;
  for (const PermissionRule& rule : permissions_.allow()) {
    if (rule.tool == kCommandRule) return true;
  }
  return false;
}

ConsentDecision Consent::ForHostCommand(
    const std::string& command, const std::string& why,
    const std::optional<RelayedConsent>& relayed) {
  PermissionQuestion question;
  question.tool = kCommandRule;
  question.summary = absl::StrCat("Run on the host: ", command);
  if (!why.empty()) question.detail = absl::StrCat("garuda-agent: ", why);
  return Decide({kCommandRule, command}, question, relayed);
}

ConsentDecision Consent::ForEdit(const ChangeSet& change_set,
                                 const std::string& tool, int project_fd,
                                 const std::optional<RelayedConsent>& relayed) {
  if (!IsEditTool(tool)) {
    return {false, absl::StrCat("refused: \"", MakeVisible(tool),
                                "\" is not an edit tool (", kEditFileRule, ", ",
                                kWriteFileRule, ")")};
  }
  if (change_set.changes.size() != 1 || change_set.summary.incomplete() ||
      !change_set.summary.refused().empty()) {
    return {false, absl::StrCat("refused: an edit changes exactly one file; "
                                "this list has ",
                                change_set.changes.size())};
  }
  const std::string path = change_set.changes[0].entry.path();
  Rendered rendered = RenderChangeSet(change_set, project_fd);
  PermissionQuestion question;
  question.tool = tool;
  question.summary =
      absl::StrCat(FindRuleName(tool)->verb, " ", VisiblePath(path));
  question.detail = rendered.diff;
  return Decide({tool, path}, question, relayed);
}

ConsentDecision Consent::ForCommandChanges(
    const ChangeSet& change_set, int project_fd,
    const std::optional<RelayedConsent>& relayed) {
  const bool complete =
      !change_set.summary.incomplete() && change_set.summary.refused().empty();
  if (mode_ == ConsentMode::kTerminal) {
    Rendered rendered = RenderChangeSet(change_set, project_fd);
    ChangeAnswer answer = asker_->AskChanges(change_set, rendered);
    // Apply needs a complete list, whatever the answer said.
    if (answer.answer != Answer::kApply || !complete) {
      return {false, "asked: discard"};
    }
    ConsentDecision decision{true, "asked: apply"};
    if (answer.some) {
      decision.how = absl::StrCat("asked: apply ", answer.chosen.size(), " of ",
                                  change_set.changes.size(), " changes");
      decision.some = true;
      decision.chosen = std::move(answer.chosen);
    }
    return decision;
  }
  if (!complete) return {false, "the list is incomplete: discard"};
  if (mode_ == ConsentMode::kRelayed && relayed) {
    // The editor's answer reaches us through the agent, which we do not
    // trust: a yes still stops at a path a deny rule keeps from write_file,
    // as a relayed edit or host command stops at its deny rule (Decide).
    if (relayed->yes) {
      for (const Change& change : change_set.changes) {
        Decision decision =
            permissions_.Decide({kWriteFileRule, change.entry.path()});
        if (decision.verdict == Verdict::kDeny) {
          return {false, absl::StrCat(RelayedHow(*relayed), ", but ",
                                      VisiblePath(change.entry.path()), " is ",
                                      decision.reason, ": discard")};
        }
      }
    }
    return Relayed(relayed);
  }
  // No person: every changed path needs an allow rule for write_file,
  // which can create, replace and remove a whole file as a command can.
  // With --apply-staged, a path no rule speaks of is applied too; a deny
  // rule, an ask rule or a sensitive name still stops the whole list.
  std::vector<std::string> allowed_by;
  std::string not_allowed;  // the first path without an allow rule
  for (const Change& change : change_set.changes) {
    const std::string path = VisiblePath(change.entry.path());
    Decision decision =
        permissions_.Decide({kWriteFileRule, change.entry.path()});
    if (decision.verdict == Verdict::kDeny) {
      return {false, absl::StrCat("no person to ask, and ", path, " is ",
                                  decision.reason, ": discard")};
    }
    if (decision.verdict == Verdict::kAsk) {
      return NobodyCouldAnswer(
          absl::StrCat(path, " asks first (", decision.reason, ")"));
    }
    if (decision.verdict != Verdict::kAllow) {
      // A sensitive name (judged here, by the name, not by the list's own
      // mark) is never applied without a person, --apply-staged or not.
      if (apply_staged_ &&
          (change.entry.sensitive() ||
           SensitiveNames::Default().Matches(change.entry.path()))) {
        return NobodyCouldAnswer(absl::StrCat(
            path, " is a sensitive file (policies/sensitive.txt)"));
      }
      if (not_allowed.empty()) not_allowed = path;
      continue;
    }
    for (std::string& rule : decision.allowed_by) {
      if (std::find(allowed_by.begin(), allowed_by.end(), rule) ==
          allowed_by.end()) {
        allowed_by.push_back(std::move(rule));
      }
    }
  }
  if (not_allowed.empty()) {
    return {true, absl::StrCat("no person to ask; allowed by ",
                               absl::StrJoin(allowed_by, ", "))};
  }
  if (apply_staged_) {
    ConsentDecision flag{true, kApplyStagedHow};
    flag.by_apply_staged = true;
    return flag;
  }
  return NobodyCouldAnswer(
      absl::StrCat(not_allowed, " has no write_file allow rule"));
}

}  // namespace garuda
