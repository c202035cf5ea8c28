#include "lib/agent/mcp_commands.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "lib/base/status_macros.h"
#include "lib/question/question.h"
#include "lib/tools/result.h"

namespace garuda {
namespace agent {

McpCommands::McpCommands(McpServerAccess* servers) : servers_(servers) {}

absl::StatusOr<std::string> McpCommands::Resources(const std::string& name) {
  return servers_->WithClient(
      name, [&](mcp::Client& client) -> absl::StatusOr<std::string> {
        ASSIGN_OR_RETURN(std::vector<mcp::Resource> resources,
                         client.ListResources());
        if (resources.empty()) return absl::StrCat(name, ": no resources");
        std::string text =
            absl::StrCat(name, ": ", resources.size(), " resources (/mcp read ",
                         name, " URI)");
        for (const mcp::Resource& r : resources) {
          absl::StrAppend(
              &text, "\n  ", r.uri, "  ", r.title.empty() ? r.name : r.title,
              r.mime_type.empty() ? "" : absl::StrCat(" (", r.mime_type, ")"));
        }
        return text;
      });
}

absl::StatusOr<std::string> McpCommands::ReadResource(const std::string& name,
                                                      const std::string& uri) {
  return servers_->WithClient(
      name, [&](mcp::Client& client) -> absl::StatusOr<std::string> {
        ASSIGN_OR_RETURN(mcp::ResourceContents contents,
                         client.ReadResource(uri));
        if (contents.is_blob) {
          return absl::StrCat(contents.uri, ": ", contents.blob_bytes,
                              " bytes of binary data (", contents.mime_type,
                              ")");
        }
        return CapToolResult(absl::StrCat(contents.uri, "\n", contents.text));
      });
}

absl::StatusOr<std::string> McpCommands::Prompts(const std::string& name) {
  return servers_->WithClient(
      name, [&](mcp::Client& client) -> absl::StatusOr<std::string> {
        ASSIGN_OR_RETURN(std::vector<mcp::Prompt> prompts,
                         client.ListPrompts());
        if (prompts.empty()) return absl::StrCat(name, ": no prompts");
        std::string text =
            absl::StrCat(name, ": ", prompts.size(), " prompts (/mcp prompt ",
                         name, " PROMPT [ARG=VALUE ...])");
        for (const mcp::Prompt& p : prompts) {
          std::vector<std::string> arguments;
          for (const mcp::PromptArgument& a : p.arguments) {
            arguments.push_back(a.required ? a.name
                                           : absl::StrCat("[", a.name, "]"));
          }
          absl::StrAppend(
              &text, "\n  ", p.name,
              arguments.empty()
                  ? ""
                  : absl::StrCat(" ", absl::StrJoin(arguments, " ")),
              p.description.empty()
                  ? ""
                  : absl::StrCat("  ", OneLineText(p.description, 120)));
        }
        return text;
      });
}

absl::StatusOr<std::string> McpCommands::GetPrompt(
    const std::string& name, const std::string& prompt,
    const std::map<std::string, std::string>& arguments) {
  return servers_->WithClient(
      name, [&](mcp::Client& client) -> absl::StatusOr<std::string> {
        ASSIGN_OR_RETURN(mcp::PromptResult result,
                         client.GetPrompt(prompt, arguments));
        std::string text = absl::StrCat(name, " prompt ", prompt);
        if (!result.description.empty()) {
          absl::StrAppend(&text, ": ", result.description);
        }
        for (const mcp::PromptMessage& m : result.messages) {
          absl::StrAppend(&text, "\n[", m.role, "] ", m.text);
        }
        return CapToolResult(text);
      });
}

std::string McpCommands::List() const {
  std::vector<McpServerView> views = servers_->Servers();
  if (views.empty()) {
    return "No MCP servers in this session (mcpServers in "
           "~/.garuda/settings.json; docs/mcp.md).";
  }
  std::string text;
  for (const McpServerView& view : views) {
    if (!text.empty()) text += "\n";
    absl::StrAppend(&text, view.name, ": ", McpStateName(view.state));
    if (!view.origin.empty()) absl::StrAppend(&text, " | from ", view.origin);
    if (!view.sandbox.empty()) absl::StrAppend(&text, " | ", view.sandbox);
    // Set only for a server with a client.
    if (!view.server.empty()) {
      absl::StrAppend(&text, " | ", view.server, " (MCP ", view.protocol, ")");
    }
    if (view.restarts > 0) {
      absl::StrAppend(&text, " | restarted ", view.restarts, "x");
    }
    std::vector<std::string> tools;
    for (const McpToolView& tool : view.tools) {
      tools.push_back(tool.read_only_hint
                          ? absl::StrCat(tool.tool, " (read-only hint)")
                          : tool.tool);
    }
    if (view.state == McpState::kReady || !tools.empty()) {
      absl::StrAppend(&text, "\n  tools (", tools.size(), "): ",
                      tools.empty() ? "none" : absl::StrJoin(tools, ", "));
    }
    if (!view.last_error.empty()) {
      absl::StrAppend(&text, "\n  last error: ", view.last_error);
    }
    for (const std::string& problem : view.problems) {
      absl::StrAppend(&text, "\n  ", problem);
    }
  }
  return text;
}

std::string McpCommands::Command(const std::string& arguments) {
  std::vector<std::string> words =
      absl::StrSplit(arguments, absl::ByAnyChar(" \t"), absl::SkipEmpty());
  constexpr char kUsage[] =
      "/mcp: the servers; /mcp restart NAME; /mcp resources NAME; /mcp read "
      "NAME URI; /mcp prompts NAME; /mcp prompt NAME PROMPT [ARG=VALUE ...]";
  if (words.empty()) return List();
  const std::string& verb = words[0];
  auto said = [](const absl::StatusOr<std::string>& text) {
    return text.ok() ? *text : std::string(text.status().message());
  };
  if (verb == "restart" && words.size() == 2) {
    absl::Status restarted = servers_->Restart(words[1]);
    if (!restarted.ok()) {
      return absl::StrCat("The MCP server ", words[1],
                          " did not restart: ", restarted.message());
    }
    return absl::StrCat("Restarted. ", List());
  }
  if (verb == "resources" && words.size() == 2) {
    return said(Resources(words[1]));
  }
  if (verb == "read" && words.size() == 3) {
    return said(ReadResource(words[1], words[2]));
  }
  if (verb == "prompts" && words.size() == 2) return said(Prompts(words[1]));
  if (verb == "prompt" && words.size() >= 3) {
    std::map<std::string, std::string> args;
    for (size_t i = 3; i < words.size(); ++i) {
      size_t eq = words[i].find('=');
      if (eq == std::string::npos) {
        return absl::StrCat("/mcp prompt: \"", words[i],
                            "\" is not ARG=VALUE. ", kUsage);
      }
      args[words[i].substr(0, eq)] = words[i].substr(eq + 1);
    }
    return said(GetPrompt(words[1], words[2], args));
  }
  return kUsage;
}

}  // namespace agent
}  // namespace garuda
