// garuda-agent: so far only the `tool` subcommand (code questions for
// scripts and measurement); the rest of the agent is another issue.
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "lib/knowledge/tool_command.h"

ABSL_FLAG(std::string, project, "", "the project root");
ABSL_FLAG(std::string, path, "", "the file, relative to --project");
ABSL_FLAG(int, line, 0, "1-based line");
ABSL_FLAG(int, column, 0, "1-based byte column");
ABSL_FLAG(int, depth, 2, "impact: how many levels of callers");
ABSL_FLAG(bool, json, false, "print the result as JSON");
ABSL_FLAG(std::string, batch, "",
          "`-`: read JSON lines {id,path,line,column} from stdin");
ABSL_FLAG(bool, lsp, true, "ask the language servers named in the settings");
ABSL_FLAG(int, max_results, 500,
          "results kept per query (the flag "
          "`approximate` survives truncation)");

ABSL_FLAG(std::string, unknown_receivers, "",
          "name matches whose receiver type is unknown: all, unique or none "
          "(default: the language's measured choice)");

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(garuda::knowledge::kToolUsage);
  absl::FlagsUsageConfig usage;
  usage.contains_help_flags = [](absl::string_view path) {
    return absl::EndsWith(path, "cmd/garuda-agent/main.cc");
  };
  usage.contains_helpshort_flags = usage.contains_help_flags;
  absl::SetFlagsUsageConfig(usage);
  std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  if (args.size() != 3 || std::string(args[1]) != "tool") {
    std::cerr << garuda::knowledge::kToolUsage;
    return 2;
  }
  garuda::knowledge::ToolCommandOptions options;
  options.operation = args[2];
  options.project = absl::GetFlag(FLAGS_project);
  options.path = absl::GetFlag(FLAGS_path);
  options.line = absl::GetFlag(FLAGS_line);
  options.column = absl::GetFlag(FLAGS_column);
  options.depth = absl::GetFlag(FLAGS_depth);
  options.json = absl::GetFlag(FLAGS_json);
  options.use_lsp = absl::GetFlag(FLAGS_lsp);
  options.max_results = absl::GetFlag(FLAGS_max_results);
  options.unknown_receivers = absl::GetFlag(FLAGS_unknown_receivers);
  std::string batch = absl::GetFlag(FLAGS_batch);
  if (!batch.empty() && batch != "-") {
    std::cerr << "garuda-agent: --batch takes only `-` (standard input)\n";
    return 2;
  }
  options.batch = batch == "-";
  absl::Status status =
      garuda::knowledge::RunToolCommand(options, std::cin, std::cout);
  if (!status.ok()) {
    std::cerr << "garuda-agent: " << status.message() << "\n";
    return 1;
  }
  return 0;
}
