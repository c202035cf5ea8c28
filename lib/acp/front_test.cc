// The front's checks of what a session worker sends, with fake workers on
// socketpairs: a worker speaks only for its own session, sends only
// session/update and session/request_permission, and answers only what it
// was asked; each line is checked beside the same line allowed (control).
#include "lib/acp/front.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "lib/acp/json_rpc.h"
#include "lib/base/files.h"
#include "lib/ipc/channel.h"

namespace garuda {
namespace acp {
namespace {

constexpr int kWaitMs = 5000;

// One line from `reader`, waiting at most kWaitMs; nullopt at the end or
// when nothing came.
std::optional<std::string> ReadLineWithin(LineReader& reader, int fd) {
  while (true) {
    if (std::optional<LineReader::Line> line = reader.Next()) return line->text;
    if (reader.ended()) return std::nullopt;
    pollfd p = {fd, POLLIN, 0};
    if (::poll(&p, 1, kWaitMs) <= 0) return std::nullopt;
    absl::StatusOr<bool> more = reader.Fill();
    if (!more.ok()) return std::nullopt;
  }
}

Message MustParse(const std::optional<std::string>& line) {
  EXPECT_TRUE(line.has_value());
  Parsed parsed = ParseMessage(line.value_or(""));
  EXPECT_TRUE(parsed.message.has_value()) << line.value_or("");
  return parsed.message.value_or(Message{});
}

struct FakeWorker {
  UniqueFd fd;
  std::unique_ptr<LineReader> reader;
  std::optional<std::string> Line() {
    return ReadLineWithin(*reader, fd.get());
  }
  void Send(const std::string& line) {
    ASSERT_TRUE(WriteAll(fd.get(), line).ok());
  }
  // True when the front closed this worker's socket.
  bool Dropped() {
    pollfd p = {fd.get(), POLLIN, 0};
    if (::poll(&p, 1, kWaitMs) <= 0) return false;
    char byte;
    return ::read(fd.get(), &byte, 1) == 0;
  }
};

class FrontTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int in[2], out[2];
    ASSERT_EQ(::pipe2(in, O_CLOEXEC), 0);
    ASSERT_EQ(::pipe2(out, O_CLOEXEC), 0);
    to_front_ = UniqueFd(in[1]);
    from_front_ = UniqueFd(out[0]);
    front_in_ = UniqueFd(in[0]);
    front_out_ = UniqueFd(out[1]);
    client_ = std::make_unique<LineReader>(from_front_.get());
    options_.in_fd = front_in_.get();
    options_.out_fd = front_out_.get();
    front_ = std::thread([this] {
      ServeFront(options_, [this]() -> absl::StatusOr<UniqueFd> {
        absl::StatusOr<std::pair<UniqueFd, UniqueFd>> pair =
            ipc::MakeSocketPair();
        if (!pair.ok()) return pair.status();
        std::lock_guard<std::mutex> lock(mutex_);
        FakeWorker worker;
        worker.reader = std::make_unique<LineReader>(pair->second.get());
        worker.fd = std::move(pair->second);
        workers_.push_back(std::move(worker));
        started_.notify_all();
        return std::move(pair->first);
      });
    });
  }
  void TearDown() override {
    {
      // The workers end first, so the front has none to wait for.
      std::lock_guard<std::mutex> lock(mutex_);
      for (FakeWorker& worker : workers_) worker.fd.Reset();
    }
    to_front_.Reset();  // the editor leaves
    front_.join();
  }

  void Send(const std::string& line) {
    ASSERT_TRUE(WriteAll(to_front_.get(), line + "\n").ok());
  }
  std::optional<std::string> ClientLine() {
    return ReadLineWithin(*client_, from_front_.get());
  }
  FakeWorker& Worker(size_t i) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (!started_.wait_for(lock, std::chrono::milliseconds(kWaitMs),
                           [&] { return workers_.size() > i; })) {
      ADD_FAILURE() << "no worker " << i << " was started";
      std::abort();
    }
    return workers_[i];
  }

  // session/new answered by worker `i` with `session_id`.
  void OpenSession(size_t i, const std::string& session_id) {
    Send(
        R"({"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/p","mcpServers":[]}})");
    Message opening = MustParse(Worker(i).Line());
    ASSERT_EQ(opening.method, "session/new");
    Value result = Object();
    Set(result, "sessionId", Str(session_id));
    Worker(i).Send(ResultLine(opening.id, result));
    Message answer = MustParse(ClientLine());
    EXPECT_EQ(IdKey(answer.id), "n:1");
    EXPECT_EQ(StringField(answer.result, "sessionId"), session_id);
  }

  std::string Update(const std::string& session_id, const std::string& text) {
    Value params = Object();
    Set(params, "sessionId", Str(session_id));
    Value update = Object();
    Set(update, "sessionUpdate", Str("agent_message_chunk"));
    Set(update, "text", Str(text));
    Set(params, "update", update);
    return NotificationLine("session/update", params);
  }

  FrontOptions options_;
  UniqueFd to_front_, from_front_, front_in_, front_out_;
  std::unique_ptr<LineReader> client_;
  std::mutex mutex_;
  std::condition_variable started_;
  std::deque<FakeWorker> workers_;
  std::thread front_;
};

TEST_F(FrontTest, AWorkerSpeaksOnlyForItsOwnSession) {
  OpenSession(0, "s1");
  // Control: its own session's update reaches the editor.
  Worker(0).Send(Update("s1", "mine"));
  Message forwarded = MustParse(ClientLine());
  EXPECT_EQ(forwarded.method, "session/update");
  EXPECT_EQ(StringField(forwarded.params, "sessionId"), "s1");
  // Another session's: the worker is dropped, nothing reaches the editor.
  Worker(0).Send(Update("s2", "not mine"));
  EXPECT_TRUE(Worker(0).Dropped());
  Send(
      R"({"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}})");
  Message refused = MustParse(ClientLine());
  EXPECT_EQ(IdKey(refused.id), "n:2");  // not the s2 update
  ASSERT_TRUE(refused.error.has_value());
  EXPECT_EQ(refused.error->code, kInvalidParams);
}

TEST_F(FrontTest, AWorkerSendsNoOtherMethodToTheEditor) {
  OpenSession(0, "s1");
  Value params = Object();
  Set(params, "sessionId", Str("s1"));
  Set(params, "path", Str("/p/x"));
  Set(params, "content", Str("written by the editor"));
  Worker(0).Send(RequestLine(Num(9), "fs/write_text_file", params));
  EXPECT_TRUE(Worker(0).Dropped());
  // The next line the editor sees answers its own request.
  Send(R"({"jsonrpc":"2.0","id":3,"method":"initialize","params":{}})");
  Message next = MustParse(ClientLine());
  EXPECT_EQ(IdKey(next.id), "n:3");
  EXPECT_TRUE(next.method.empty());
}

TEST_F(FrontTest, APermissionRequestGoesToTheEditorAndItsAnswerBack) {
  OpenSession(0, "s1");
  Value params = Object();
  Set(params, "sessionId", Str("s1"));
  Worker(0).Send(RequestLine(Num(7), "session/request_permission", params));
  Message asked = MustParse(ClientLine());
  EXPECT_EQ(asked.kind, Message::Kind::kRequest);
  EXPECT_EQ(asked.method, "session/request_permission");
  Value outcome = Object();
  Set(outcome, "outcome", Str("selected"));
  Set(outcome, "optionId", Str("allow_once"));
  Value result = Object();
  Set(result, "outcome", outcome);
  Send(ResultLine(asked.id, result)
           .substr(0, ResultLine(asked.id, result).size() - 1));
  Message answered = MustParse(Worker(0).Line());
  EXPECT_EQ(answered.kind, Message::Kind::kResponse);
  EXPECT_EQ(IdKey(answered.id), "n:7");  // the worker's own id
  // The same answer again answers nothing: not passed on.
  Send(ResultLine(asked.id, result)
           .substr(0, ResultLine(asked.id, result).size() - 1));
  Worker(0).Send(Update("s1", "still here"));
  EXPECT_EQ(MustParse(ClientLine()).method, "session/update");
}

TEST_F(FrontTest, AnAnswerToNothingDropsTheWorkerAndItsPromptGetsAnError) {
  OpenSession(0, "s1");
  Send(
      R"({"jsonrpc":"2.0","id":"p","method":"session/prompt","params":{"sessionId":"s1","prompt":[]}})");
  Message prompt = MustParse(Worker(0).Line());
  EXPECT_EQ(prompt.method, "session/prompt");
  Worker(0).Send(
      ResultLine(Num(12345), Object()));  // asked nothing of the kind
  EXPECT_TRUE(Worker(0).Dropped());
  Message failed = MustParse(ClientLine());
  EXPECT_EQ(IdKey(failed.id), "s:p");
  ASSERT_TRUE(failed.error.has_value());
  EXPECT_NE(failed.error->message.find("the session ended"), std::string::npos);
}

TEST_F(FrontTest, AWorkerThatSpeaksBeforeItsSessionIsOpenIsDropped) {
  Send(
      R"({"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/p","mcpServers":[]}})");
  ASSERT_TRUE(Worker(0).Line().has_value());
  Worker(0).Send(Update("s1", "too early"));
  EXPECT_TRUE(Worker(0).Dropped());
  Message failed = MustParse(ClientLine());
  EXPECT_EQ(IdKey(failed.id), "n:1");
  EXPECT_TRUE(failed.error.has_value());
}

}  // namespace
}  // namespace acp
}  // namespace garuda
