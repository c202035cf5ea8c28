#include "lib/acp/json_rpc.h"

#include <fcntl.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "lib/acp/prompt.h"
#include "lib/base/files.h"

namespace garuda {
namespace acp {
namespace {

// The lines a reader gives for `input` written into a pipe in one go.
std::vector<LineReader::Line> LinesOf(const std::string& input,
                                      size_t max_line) {
  int pipe_fds[2];
  EXPECT_EQ(::pipe2(pipe_fds, O_CLOEXEC), 0);
  EXPECT_TRUE(WriteAll(pipe_fds[1], input).ok());
  ::close(pipe_fds[1]);
  LineReader reader(pipe_fds[0], max_line);
  std::vector<LineReader::Line> lines;
  while (true) {
    absl::StatusOr<std::optional<LineReader::Line>> line = reader.ReadLine();
    EXPECT_TRUE(line.ok());
    if (!line.ok() || !line->has_value()) break;
    lines.push_back(**line);
  }
  ::close(pipe_fds[0]);
  return lines;
}

TEST(LineReaderTest, SplitsLinesAndKeepsALastLineWithoutNewline) {
  std::vector<LineReader::Line> lines =
      LinesOf("{\"a\":1}\n\n  \t\n{\"b\":2}\r\n{}", 100);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0].text, "{\"a\":1}");
  EXPECT_EQ(lines[1].text, "{\"b\":2}");
  EXPECT_EQ(lines[2].text, "{}");
}

TEST(LineReaderTest, ALineOverTheCapIsDroppedAndTheNextIsRead) {
  std::string big(5000, 'x');
  std::vector<LineReader::Line> lines =
      LinesOf("{\"a\":1}\n" + big + "\n{\"b\":2}\n", 1000);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_FALSE(lines[0].too_long);
  EXPECT_TRUE(lines[1].too_long);
  EXPECT_EQ(lines[1].bytes, 5000u);
  EXPECT_TRUE(lines[1].text.empty());  // never kept
  EXPECT_EQ(lines[2].text, "{\"b\":2}");
  // Control: at the cap itself the line is taken.
  std::vector<LineReader::Line> at_cap =
      LinesOf(std::string(1000, 'y') + "\n", 1000);
  ASSERT_EQ(at_cap.size(), 1u);
  EXPECT_FALSE(at_cap[0].too_long);
}

TEST(ParseMessageTest, RequestNotificationAndResponse) {
  Parsed request = ParseMessage(
      R"({"jsonrpc":"2.0","id":7,"method":"session/new","params":{"cwd":"/p"}})");
  ASSERT_TRUE(request.message.has_value()) << request.error.message;
  EXPECT_EQ(request.message->kind, Message::Kind::kRequest);
  EXPECT_EQ(request.message->method, "session/new");
  EXPECT_EQ(StringField(request.message->params, "cwd"), "/p");
  EXPECT_EQ(IdKey(request.message->id), "n:7");

  Parsed notification = ParseMessage(
      R"({"jsonrpc":"2.0","method":"session/cancel","params":{}})");
  ASSERT_TRUE(notification.message.has_value());
  EXPECT_EQ(notification.message->kind, Message::Kind::kNotification);

  Parsed response = ParseMessage(
      R"({"jsonrpc":"2.0","id":"a","error":{"code":-32601,"message":"no"}})");
  ASSERT_TRUE(response.message.has_value());
  EXPECT_EQ(response.message->kind, Message::Kind::kResponse);
  ASSERT_TRUE(response.message->error.has_value());
  EXPECT_EQ(response.message->error->code, -32601);
}

TEST(ParseMessageTest, MalformedInputIsAnErrorWithTheIdWhenReadable) {
  Parsed not_json = ParseMessage(R"({"jsonrpc":"2.0","id":1,)");
  EXPECT_FALSE(not_json.message.has_value());
  EXPECT_EQ(not_json.error.code, kParseError);

  Parsed twice =
      ParseMessage(R"({"jsonrpc":"2.0","id":1,"id":2,"method":"x"})");
  EXPECT_FALSE(twice.message.has_value());
  EXPECT_EQ(twice.error.code, kParseError);

  Parsed wrong_version =
      ParseMessage(R"({"jsonrpc":"1.0","id":3,"method":"x"})");
  EXPECT_FALSE(wrong_version.message.has_value());
  EXPECT_EQ(wrong_version.error.code, kInvalidRequest);
  EXPECT_EQ(IdKey(wrong_version.id), "n:3");  // answered to its id

  Parsed list = ParseMessage(R"([{"jsonrpc":"2.0","id":1,"method":"x"}])");
  EXPECT_EQ(list.error.code, kInvalidRequest);

  Parsed bad_id = ParseMessage(R"({"jsonrpc":"2.0","id":{},"method":"x"})");
  EXPECT_EQ(bad_id.error.code, kInvalidRequest);
  EXPECT_EQ(bad_id.id.kind_case(), Value::kNullValue);

  Parsed neither = ParseMessage(R"({"jsonrpc":"2.0","id":1})");
  EXPECT_EQ(neither.error.code, kInvalidRequest);
}

TEST(JsonLineTest, LinesRoundTripAndCarryNoNewline) {
  Value params = Object();
  Set(params, "text", Str("two\nlines \"quoted\""));
  std::string line = RequestLine(Num(12), "session/update", params);
  ASSERT_EQ(line.back(), '\n');
  EXPECT_EQ(line.find('\n'), line.size() - 1);
  Parsed parsed = ParseMessage(line.substr(0, line.size() - 1));
  ASSERT_TRUE(parsed.message.has_value()) << parsed.error.message;
  EXPECT_EQ(StringField(parsed.message->params, "text"),
            "two\nlines \"quoted\"");
  EXPECT_EQ(IdKey(parsed.message->id), "n:12");
  EXPECT_NE(ErrorLine(Null(), {kParseError, "x"}).find("\"id\":null"),
            std::string::npos);
}

TEST(JsonLineTest, InvalidUtf8InAStringStillMakesALine) {
  Value params = Object();
  Set(params, "output", Str("bytes \xff\xfe of a command"));
  std::string line = NotificationLine("session/update", params);
  Parsed parsed = ParseMessage(line.substr(0, line.size() - 1));
  ASSERT_TRUE(parsed.message.has_value()) << line;
  EXPECT_EQ(StringField(parsed.message->params, "output"),
            "bytes \xef\xbf\xbd\xef\xbf\xbd of a command");
}

TEST(PromptTextTest, TextResourcesAndRefusedBlocks) {
  Parsed parsed = ParseMessage(
      R"({"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"text","text":"fix it"},{"type":"resource","resource":{"uri":"file:///p/a.c","text":"int x;"}}]}})");
  ASSERT_TRUE(parsed.message.has_value());
  absl::StatusOr<std::string> text = PromptText(parsed.message->params);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_NE(text->find("fix it"), std::string::npos);
  EXPECT_NE(text->find("<resource uri=\"file:///p/a.c\">\nint x;\n"),
            std::string::npos);
  Parsed image = ParseMessage(
      R"({"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"image","data":"","mimeType":"image/png"}]}})");
  ASSERT_TRUE(image.message.has_value());
  absl::StatusOr<std::string> refused = PromptText(image.message->params);
  EXPECT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("prompt[0]"), std::string::npos);
}

}  // namespace
}  // namespace acp
}  // namespace garuda
