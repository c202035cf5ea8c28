// The lines a line session shows the person around its turns: the status
// line after each turn, what /undo did, and the last exchanges of a resumed
// conversation. Text only; the Interaction prints it.
#ifndef GARUDA_LIB_AGENT_SESSION_VIEW_H_
#define GARUDA_LIB_AGENT_SESSION_VIEW_H_

#include <map>
#include <string>
#include <vector>

#include "proto/agent_report.pb.h"
#include "proto/applier_service.pb.h"
#include "proto/budgeter_service.pb.h"
#include "proto/provider.pb.h"

namespace garuda {
namespace agent {

// "1 234 tokens this turn (1 000 in, 234 out) | 98 766 of 100 000 left |
// commands staged (overlay)". `budget` may be null (its status could not be
// read): that part says so. `mode` as SessionDescription has it.
std::string TurnStatusLine(const UsageReport& usage,
                           const budget::BudgetStatus* budget,
                           const std::string& mode, const std::string& backend);

// What /undo did, for the person: the applier's line, the files restored,
// and in direct mode that what commands changed is not undone by it.
std::string UndoText(const applier::UndoOutcome& undone, bool staged);

// How many a resumed terminal session shows before its first prompt.
inline constexpr int kResumedExchangesShown = 3;

// The last `exchanges` exchanges of a resumed conversation, oldest first: a
// line per prompt ("> ..."), per answer and per tool call, each cut to a
// few lines. "" for an empty conversation.
std::string LastExchanges(const std::vector<provider::ChatMessage>& messages,
                          int exchanges);

// 1234567 as "1 234 567".
std::string GroupedNumber(int64_t number);

// /budget: the totals and one row per agent, a child named by its report
// id and its task's description (`descriptions`).
std::string BudgetText(const budget::BudgetStatus& status,
                       const std::map<std::string, std::string>& descriptions);

}  // namespace agent
}  // namespace garuda

#endif  // GARUDA_LIB_AGENT_SESSION_VIEW_H_
