#include "lib/agent/session_view.h"

#include <cstdlib>
#include <map>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "lib/agent/tool_display.h"

namespace garuda {
namespace agent {
namespace {

constexpr size_t kPromptLines = 3;
constexpr size_t kAnswerLines = 6;
constexpr size_t kFilesNamed = 20;

// The first `max_lines` lines of `text`, then a line saying how many more.
std::string FirstLines(absl::string_view text, size_t max_lines,
                       absl::string_view indent) {
  std::vector<absl::string_view> lines = absl::StrSplit(text, '\n');
  while (!lines.empty() && lines.back().empty()) lines.pop_back();
  std::string out;
  for (size_t i = 0; i < lines.size() && i < max_lines; ++i) {
    absl::StrAppend(&out, i == 0 ? "" : indent, lines[i], "\n");
  }
  if (lines.size() > max_lines) {
    absl::StrAppend(&out, indent, "[", lines.size() - max_lines, " more ",
                    lines.size() - max_lines == 1 ? "line" : "lines", "]\n");
  }
  return out;
}

// A prompt the person typed, as opposed to a note Garuda added
// ("[Garuda: ...]"). A prompt after a turn that ended in its tool calls
// shares their results' message.
bool IsPrompt(const provider::ChatMessage& message) {
  return message.role() == "user" && !message.text().empty() &&
         !absl::StartsWith(message.text(), "[Garuda:");
}

}  // namespace

std::string GroupedNumber(int64_t number) {
  std::string digits = absl::StrCat(std::llabs(number));
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(' ');
    out.push_back(digits[i]);
  }
  return number < 0 ? absl::StrCat("-", out) : out;
}

std::string TurnStatusLine(const UsageReport& usage,
                           const budget::BudgetStatus* budget,
                           const std::string& mode,
                           const std::string& backend) {
  // What the budget charged is what counts against it (failed attempts
  // included); the in/out split is what the provider reported.
  const uint32_t used = usage.charged_tokens() > 0
                            ? usage.charged_tokens()
                            : usage.input_tokens() + usage.output_tokens();
  std::string line =
      absl::StrCat(GroupedNumber(used), " tokens this turn (",
                   GroupedNumber(usage.input_tokens()), " in, ",
                   GroupedNumber(usage.output_tokens()), " out)");
  if (budget == nullptr) {
    line += " | budget: unknown";
  } else if (budget->limit() <= 0) {
    absl::StrAppend(&line, " | ", GroupedNumber(budget->spent()),
                    " spent, no budget limit");
  } else {
    absl::StrAppend(&line, " | ", GroupedNumber(budget->left()), " of ",
                    GroupedNumber(budget->limit()), " left");
  }
  absl::StrAppend(&line, " | commands ", mode.empty() ? "direct" : mode);
  if (!backend.empty()) absl::StrAppend(&line, " (", backend, ")");
  return line;
}

std::string UndoText(const applier::UndoOutcome& undone, bool staged) {
  std::string text = undone.line();
  const bool restored = undone.kind() == applier::ApplyOutcome::APPLIED;
  if (restored && undone.paths_size() > 0) {
    std::vector<std::string> named;
    for (int i = 0; i < undone.paths_size() && named.size() < kFilesNamed;
         ++i) {
      named.push_back(undone.paths(i));
    }
    absl::StrAppend(&text, "\nRestored ", undone.paths_size(),
                    undone.paths_size() == 1 ? " file: " : " files: ",
                    absl::StrJoin(named, ", "));
    if (undone.paths_size() > static_cast<int>(named.size())) {
      absl::StrAppend(&text, " and ", undone.paths_size() - named.size(),
                      " more");
    }
  } else if (restored && undone.files() > 0) {
    absl::StrAppend(&text, "\nRestored ", undone.files(),
                    undone.files() == 1 ? " file" : " files");
  }
  if (!staged) {
    text +=
        "\nIn direct mode commands write the project themselves: /undo puts "
        "back only the changes Garuda applied (edits, writes), not what a "
        "command changed.";
  }
  return text;
}

std::string LastExchanges(const std::vector<provider::ChatMessage>& messages,
                          int exchanges) {
  // The start of the last `exchanges` prompts.
  size_t start = messages.size();
  int seen = 0;
  for (size_t i = messages.size(); i > 0 && seen < exchanges; --i) {
    if (IsPrompt(messages[i - 1])) {
      start = i - 1;
      ++seen;
    }
  }
  if (seen == 0) return "";
  int earlier = 0;
  for (size_t i = 0; i < start; ++i) earlier += IsPrompt(messages[i]);
  std::string out;
  if (earlier > 0) {
    absl::StrAppend(&out, "[", earlier, " earlier ",
                    earlier == 1 ? "exchange" : "exchanges", " not shown]\n");
  }
  for (size_t i = start; i < messages.size(); ++i) {
    const provider::ChatMessage& message = messages[i];
    if (IsPrompt(message)) {
      absl::StrAppend(&out, "> ",
                      FirstLines(message.text(), kPromptLines, "  "));
      continue;
    }
    if (message.role() != "assistant") continue;
    if (!message.text().empty()) {
      out += FirstLines(message.text(), kAnswerLines, "");
    }
    for (const provider::ToolCall& call : message.tool_calls()) {
      absl::StrAppend(&out, "-> ",
                      ToolCallSummary(call.name(), call.arguments_json(), ""),
                      "\n");
    }
  }
  return out;
}

std::string BudgetText(const budget::BudgetStatus& status,
                       const std::map<std::string, std::string>& descriptions) {
  std::string out = absl::StrFormat(
      "Token budget: limit %d, spent %d, reserved %d, left %d", status.limit(),
      status.spent(), status.reserved(), status.left());
  if (status.leased() > 0) {
    absl::StrAppendFormat(&out, ", %d leased to running children",
                          status.leased());
  }
  if (status.floor() > 0) {
    absl::StrAppendFormat(&out, " (%d kept for the main agent's final answer)",
                          status.floor());
  }
  absl::StrAppend(&out, ".\n");
  absl::StrAppend(
      &out,
      "  reserved: held for requests in flight; what a request does not use "
      "comes back when it ends.\n"
      "  charged with no reported usage: the provider sent no complete usage, "
      "so the whole reservation stays spent.\n");
  absl::StrAppendFormat(&out, "%-28s %-8s %10s %10s %10s %10s %8s\n", "agent",
                        "state", "spent", "reserved", "unreported", "children",
                        "requests");
  // Rows in the ledger's order (a child after its parent), indented by depth.
  std::map<uint32_t, int> depth_of;
  for (const budget::AgentUsage& agent : status.agents()) {
    const bool top = agent.agent() == 0;
    const int depth = top ? 0 : depth_of[agent.parent()] + 1;
    depth_of[agent.agent()] = depth;
    std::string name = "main (this session)";
    if (!top) {
      auto it = descriptions.find(agent.report_id());
      name = absl::StrCat(agent.report_id(), " ",
                          it != descriptions.end() ? it->second : "");
    }
    name = absl::StrCat(std::string(2 * depth, ' '), name);
    if (name.size() > 28) name = absl::StrCat(name.substr(0, 25), "...");
    absl::StrAppendFormat(&out, "%-28s %-8s %10d %10d %10d %10d %8d\n", name,
                          top ? "main" : (agent.open() ? "running" : "ended"),
                          agent.spent(), agent.reserved(), agent.unreported(),
                          agent.children(), agent.requests());
    if (agent.capped() > 0) {
      absl::StrAppendFormat(
          &out,
          "  capped: %d usage reports above what one request can cost were "
          "charged at that cap (%d reported tokens not charged)\n",
          agent.capped(), agent.capped_tokens());
    }
  }
  return out;
}

}  // namespace agent
}  // namespace garuda
