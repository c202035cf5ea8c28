#include "lib/agent/mcp_server_state.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "lib/tools/tool_table.h"

namespace garuda {
namespace agent {
namespace {

std::string RuleChars(absl::string_view name) {
  std::string out(name);
  for (char& c : out) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_' &&
        c != '-') {
      c = '_';
    }
  }
  return out;
}

}  // namespace

const char* McpStateName(McpState state) {
  switch (state) {
    case McpState::kReady:
      return "ready";
    case McpState::kFailed:
      return "failed";
    case McpState::kDown:
      return "down";
    case McpState::kSkipped:
      return "skipped";
  }
  return "failed";
}

std::string McpToolRule(absl::string_view server, absl::string_view tool) {
  return absl::StrCat(kMcpRulePrefix, RuleChars(server), "__", RuleChars(tool));
}

std::string McpServerRule(absl::string_view server) {
  return absl::StrCat(kMcpRulePrefix, RuleChars(server));
}

std::string McpSeconds(absl::Duration d) {
  return absl::StrCat(absl::ToInt64Seconds(d), " s");
}

void McpServerState::SetOffered() {
  for (auto& [name, tool] : tools) {
    tool->offered = state == McpState::kReady && tool->listed;
  }
}

}  // namespace agent
}  // namespace garuda
