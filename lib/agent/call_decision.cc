#include "lib/agent/call_decision.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace garuda {
namespace agent {
namespace {

constexpr char kNoPersonText[] =
    "Not run: no person can answer questions in this session, so the "
    "answer is no. An allow rule in the settings (permissions.allow) can "
    "permit such calls.";
constexpr char kDeniedByPersonText[] = "The user said no to this call.";

// Allowed only thanks to a session answer ("... from this session").
bool AllowedForSession(const Decision& decision) {
  for (const std::string& rule : decision.allowed_by) {
    if (absl::StrContains(rule, "this session")) return true;
  }
  return false;
}

Decided Denied(std::string text, std::string for_model) {
  return {"deny", std::move(text), std::move(for_model), std::nullopt};
}

}  // namespace

RelayedAnswer RelayedYes(bool yes, const std::string& from) {
  RelayedAnswer answer;
  answer.set_from(from);
  answer.set_yes(yes);
  return answer;
}

Decided CallDecision::Decide(const CallQuestion& question) {
  Decision decision = c_.permissions->Decide(request_);
  if (decision.verdict == Verdict::kDeny) {
    std::string text = absl::StrCat("denied by ", decision.reason);
    return Denied(text, absl::StrCat("Denied: ", text));
  }
  bool ask = decision.verdict == Verdict::kAsk ||
             (question.ask_by_default && decision.verdict != Verdict::kAllow);
  if (!ask) {
    Decided allowed;
    allowed.verdict = "allow";
    allowed.text =
        decision.verdict == Verdict::kAllow
            ? absl::StrCat("allowed by ",
                           decision.allowed_by.empty()
                               ? decision.reason
                               : absl::StrJoin(decision.allowed_by, ", "))
            : "allowed: no rule asks";
    // An editor's "allow always" is remembered here, so the helper, which
    // cannot ask, gets it relayed each time (marked as a session answer).
    if (question.helper != nullptr && c_.interaction->RelaysAnswers() &&
        AllowedForSession(decision)) {
      allowed.relayed = RelayedYes(true, "acp (allowed for this session)");
    }
    return allowed;
  }
  std::string why =
      decision.verdict == Verdict::kAsk && !decision.reason.empty()
          ? decision.reason
          : question.detail;
  if (!c_.interaction->CanAsk()) {
    return Denied("no person to ask: no", kNoPersonText);
  }
  const bool relay =
      question.helper != nullptr && c_.interaction->RelaysAnswers();
  if (question.helper != nullptr && !relay) {
    return {"propose",
            absl::StrCat("proposed: ", question.helper, " asks the person"), "",
            std::nullopt};
  }
  return Ask(question, why, relay);
}

Decided CallDecision::Ask(const CallQuestion& question, const std::string& why,
                          bool relay) {
  PermissionQuestion q;
  q.tool = tool_;
  q.summary = question.summary;
  q.detail = why;
  q.session_rule = Permissions::SessionRuleFor(request_);
  PermissionAnswer answer =
      relay && question.edit != nullptr && !question.edit->changes.empty()
          ? c_.interaction->AskEdit(q, *question.edit)
          : c_.interaction->AskPermission(q);
  std::optional<RelayedAnswer> relayed;
  if (relay) relayed = RelayedYes(answer != PermissionAnswer::kNo, "acp");
  if (answer == PermissionAnswer::kNo) {
    Decided no = Denied("asked: no", kDeniedByPersonText);
    no.relayed = relayed;
    return no;
  }
  std::string text = "asked: yes";
  if (answer == PermissionAnswer::kYesForSession && q.session_rule) {
    absl::Status remembered =
        c_.permissions->RememberForSession(*q.session_rule);
    if (remembered.ok()) {
      text =
          absl::StrCat("asked: yes, and for this session: ", *q.session_rule);
    }
  }
  return {"allow", text, "", relayed};
}

}  // namespace agent
}  // namespace garuda
