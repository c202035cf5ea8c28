#include "lib/agent/tool_display.h"

#include <string>

#include "gtest/gtest.h"

namespace garuda {
namespace agent {
namespace {

TEST(ToolCallSummaryTest, SaysWhatEachToolIsAskedFor) {
  EXPECT_EQ(ToolCallSummary("grep", R"({"pattern": "TODO|FIXME", "path": "src",
                                        "glob": "*.c"})",
                            "src"),
            "grep \"TODO|FIXME\" in src (*.c)");
  EXPECT_EQ(ToolCallSummary("grep", R"({"pattern": "x"})", ""),
            "grep \"x\" in the project root");
  EXPECT_EQ(ToolCallSummary("list_files", R"({"path": "lib", "glob": "*.h"})",
                            "lib"),
            "list_files lib matching *.h");
  EXPECT_EQ(ToolCallSummary("list_files", "{}", ""),
            "list_files the project root");
  EXPECT_EQ(ToolCallSummary("read_file",
                            R"({"path": "a.c", "offset": 10, "limit": 40})",
                            "a.c"),
            "read_file a.c lines 10-49");
  EXPECT_EQ(ToolCallSummary("read_file", R"({"path": "a.c", "offset": 7})", ""),
            "read_file a.c from line 7");
  EXPECT_EQ(ToolCallSummary("read_file", R"({"path": "a.c"})", ""),
            "read_file a.c");
  EXPECT_EQ(ToolCallSummary("bash", R"({"command": "make\ntest"})", ""),
            "bash: make test");
  EXPECT_EQ(ToolCallSummary("bash",
                            R"({"command": "sudo x", "outside_sandbox": true})",
                            ""),
            "bash: sudo x (outside the sandbox)");
  EXPECT_EQ(ToolCallSummary("write_file", R"({"path": "n.txt",
                                              "content": "abc"})",
                            ""),
            "write_file n.txt (3 bytes)");
  EXPECT_EQ(ToolCallSummary("callers", R"({"symbol": "Cart.add"})", ""),
            "callers Cart.add");
  EXPECT_EQ(ToolCallSummary("find_references",
                            R"({"path": "a.py", "line": 3, "column": 5})", ""),
            "find_references a.py:3:5");
}

TEST(ToolCallSummaryTest, ArgumentsThatDoNotParseFallBack) {
  EXPECT_EQ(ToolCallSummary("grep", "{not json", ""), "grep: {not json");
  EXPECT_EQ(ToolCallSummary("read_file", R"({"path": 3})", "fallback"),
            "read_file: fallback");
  // A fractional line range is not shown as one.
  EXPECT_EQ(ToolCallSummary("read_file", R"({"path": "a", "offset": 1.5})", ""),
            "read_file a");
  std::string long_pattern(500, 'x');
  std::string line = ToolCallSummary(
      "grep", "{\"pattern\": \"" + long_pattern + "\"}", "");
  EXPECT_LT(line.size(), 260u);
  EXPECT_NE(line.find("...\""), std::string::npos);
}


TEST(CommandOutputTest, BothStreamsAndTheirCuts) {
  stager::CommandResult result;
  result.set_stdout_data("out");
  result.set_stderr_data("err\n");
  result.set_stderr_truncated(true);
  EXPECT_EQ(CommandOutputForPerson(result),
            "out\nerr\n[stderr was cut after 4 bytes]\n");
  EXPECT_EQ(CommandOutputForPerson(stager::CommandResult()), "");
  // As the model sees it: each stream after its name.
  EXPECT_EQ(CapturedOutput(result, true),
            "stdout:\nout\nstderr:\nerr\n[stderr was cut after 4 bytes]\n");
}

}  // namespace
}  // namespace agent
}  // namespace garuda
