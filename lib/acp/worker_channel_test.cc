#include "lib/acp/worker_channel.h"

#include "gtest/gtest.h"

namespace garuda {
namespace acp {
namespace {

LineReader::Line Line(const std::string& text) {
  LineReader::Line line;
  line.text = text;
  line.bytes = text.size();
  return line;
}

TEST(WorkerChannelTest, AWorkerMaySendOnlyItsThreeMessages) {
  absl::StatusOr<WorkerMessage> update = ParseFromWorker(Line(
      R"({"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s"}})"));
  ASSERT_TRUE(update.ok()) << update.status();
  EXPECT_EQ(update->verb, FromWorkerVerb::kSessionUpdate);
  EXPECT_EQ(update->session_id, "s");
  absl::StatusOr<WorkerMessage> ask = ParseFromWorker(Line(
      R"({"jsonrpc":"2.0","id":4,"method":"session/request_permission","params":{"sessionId":"s"}})"));
  ASSERT_TRUE(ask.ok()) << ask.status();
  EXPECT_EQ(ask->verb, FromWorkerVerb::kRequestPermission);
  absl::StatusOr<WorkerMessage> answer =
      ParseFromWorker(Line(R"({"jsonrpc":"2.0","id":1,"result":{}})"));
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(answer->verb, FromWorkerVerb::kResponse);

  // Anything else ends the worker, with what it sent.
  absl::StatusOr<WorkerMessage> other = ParseFromWorker(Line(
      R"({"jsonrpc":"2.0","id":2,"method":"fs/write_text_file","params":{}})"));
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().message(),
            "fs/write_text_file, which a worker may not send");
  // session/update as a request is not the notification.
  EXPECT_FALSE(
      ParseFromWorker(
          Line(
              R"({"jsonrpc":"2.0","id":3,"method":"session/update","params":{}})"))
          .ok());
  absl::StatusOr<WorkerMessage> garbage = ParseFromWorker(Line("{not json"));
  ASSERT_FALSE(garbage.ok());
  EXPECT_EQ(garbage.status().message(), "a message that is not JSON-RPC");
  LineReader::Line long_line = Line("{}");
  long_line.too_long = true;
  EXPECT_FALSE(ParseFromWorker(long_line).ok());
}

TEST(WorkerChannelTest, TheFrontsMessagesByVerb) {
  auto verb = [](const std::string& text) {
    absl::StatusOr<FrontMessage> parsed = ParseFromFront(Line(text));
    EXPECT_TRUE(parsed.ok()) << text;
    return parsed.ok() ? parsed->verb : FromFrontVerb::kResponse;
  };
  EXPECT_EQ(
      verb(R"({"jsonrpc":"2.0","id":1,"method":"session/new","params":{}})"),
      FromFrontVerb::kOpen);
  EXPECT_EQ(
      verb(R"({"jsonrpc":"2.0","id":1,"method":"session/load","params":{}})"),
      FromFrontVerb::kOpen);
  EXPECT_EQ(
      verb(R"({"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{}})"),
      FromFrontVerb::kPrompt);
  EXPECT_EQ(verb(R"({"jsonrpc":"2.0","method":"session/cancel","params":{}})"),
            FromFrontVerb::kCancel);
  EXPECT_EQ(
      verb(R"({"jsonrpc":"2.0","id":3,"method":"session/cancel","params":{}})"),
      FromFrontVerb::kCancel);
  EXPECT_EQ(verb(R"({"jsonrpc":"2.0","id":3,"result":{}})"),
            FromFrontVerb::kResponse);
  // A request of another method is answered METHOD_NOT_FOUND by the worker.
  EXPECT_EQ(verb(R"({"jsonrpc":"2.0","id":4,"method":"fs/read","params":{}})"),
            FromFrontVerb::kOtherRequest);
  // A prompt sent as a notification, and other notifications, are no verb.
  EXPECT_FALSE(
      ParseFromFront(
          Line(R"({"jsonrpc":"2.0","method":"session/prompt","params":{}})"))
          .ok());
  EXPECT_FALSE(ParseFromFront(Line("[]")).ok());
}

}  // namespace
}  // namespace acp
}  // namespace garuda
