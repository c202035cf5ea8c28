// The scripted-provider program, as the agent's multi-process tests will run
// it: started with a script file, its port read from its stdout, a request
// sent by ModelClient, the request found in its log, SIGTERM to end it.
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "lib/provider/client.h"

namespace garuda {
namespace provider {
namespace {

// Grants every ask in full; this test is about the program, not the budget.
class UnlimitedMeter : public RequestMeter {
 public:
  class Held : public Reservation {
   public:
    explicit Held(int64_t tokens) : tokens_(tokens) {}
    int64_t tokens() const override { return tokens_; }
    absl::StatusOr<int64_t> Settle(const TokenUsage&, bool) override {
      return tokens_;
    }

   private:
    int64_t tokens_;
  };
  absl::StatusOr<Grant> Reserve(const ReserveAsk& ask) override {
    Grant grant;
    grant.reservation =
        std::make_unique<Held>(ask.input_tokens + ask.output_limit);
    grant.output_limit = ask.output_limit;
    return grant;
  }
};

TEST(ScriptedProviderTest, ServesItsScriptAndLogsTheRequest) {
  const std::string dir = std::getenv("TEST_TMPDIR");
  const std::string script = JoinPath(dir, "script.json");
  const std::string log = JoinPath(dir, "requests.jsonl");
  ASSERT_TRUE(WriteFileAtomically(
                  script,
                  R"({"replies": [{"text": "scripted hello", "textPieces": 3,
                      "inputTokens": 11, "outputTokens": 2}]})",
                  0644)
                  .ok());
  const std::string binary = JoinPath(
      JoinPath(std::getenv("TEST_SRCDIR"), std::getenv("TEST_WORKSPACE")),
      "tests/providers/scripted_provider");
  int out[2];
  ASSERT_EQ(::pipe2(out, O_CLOEXEC), 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::dup2(out[1], 1);
    const std::string script_flag = "--script=" + script;
    const std::string log_flag = "--requests-log=" + log;
    ::execl(binary.c_str(), binary.c_str(), "--kind=openai",
            script_flag.c_str(), log_flag.c_str(), nullptr);
    ::_exit(127);
  }
  ::close(out[1]);
  // However the test ends, the server does not outlive it.
  struct Reaper {
    pid_t pid;
    ~Reaper() {
      if (pid > 0) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
      }
    }
  } reaper{pid};
  // The first line on its stdout is the port (a blocking read: it comes
  // once the server listens).
  std::string line;
  char c;
  while (::read(out[0], &c, 1) == 1 && c != '\n') line.push_back(c);
  ::close(out[0]);
  int port = 0;
  ASSERT_TRUE(absl::SimpleAtoi(line, &port)) << "stdout: " << line;

  ClientOptions options;
  options.provider = "openai";
  options.model = "m";
  options.base_url = "http://127.0.0.1:" + std::to_string(port) + "/v1";
  auto client = ModelClient::Create(options);
  ASSERT_TRUE(client.ok());
  ModelRequest request;
  ChatMessage* message = request.add_messages();
  message->set_role("user");
  message->set_text("hi");
  UnlimitedMeter meter;
  CancelFlag cancel;
  auto response = (*client)->Send(request, &meter, {}, &cancel);
  ::kill(pid, SIGTERM);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  reaper.pid = 0;
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->text(), "scripted hello");
  EXPECT_TRUE(response->usage_reported());
  auto logged = ReadFileToString(log);
  ASSERT_TRUE(logged.ok()) << logged.status();
  std::vector<std::string> lines =
      absl::StrSplit(absl::StripTrailingAsciiWhitespace(*logged), '\n');
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("\"path\":\"/v1/chat/completions\""),
            std::string::npos)
      << lines[0];
}

}  // namespace
}  // namespace provider
}  // namespace garuda
