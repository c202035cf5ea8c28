#include "lib/ipc/dispatcher.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "lib/ipc/ipc_test.pb.h"
#include "lib/ipc/testing/echo_service.h"
#include "lib/ipc/testing/test_util.h"

namespace garuda {
namespace ipc {
namespace {

using ipc_test::EchoReply;
using ipc_test::EchoRequest;
using ::testing::HasSubstr;

// The echo service served on a thread, a client Channel in the test.
class DispatcherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto pair = MakeSocketPair();
    ASSERT_TRUE(pair.ok()) << pair.status();
    ChannelOptions client_options, server_options;
    client_options.peer_name = "echo server";
    server_options.peer_name = "echo client";
    client_ = std::make_unique<Channel>(std::move(pair->first), client_options);
    server_ =
        std::make_unique<Channel>(std::move(pair->second), server_options);
    dispatcher_ = MakeEchoDispatcher();
    thread_ = std::thread([this] { served_ = dispatcher_->Serve(*server_); });
  }
  void TearDown() override {
    if (thread_.joinable()) {
      client_->Close();
      thread_.join();
    }
  }
  // Closes the client's end and returns what Serve() returned.
  absl::Status Finish() {
    client_->Close();
    thread_.join();
    return served_;
  }
  // Waits for Serve() to end by itself (after a protocol error).
  absl::Status Served() {
    thread_.join();
    return served_;
  }

  EchoRequest Request(uint64_t seq) {
    EchoRequest request;
    request.set_seq(seq);
    return request;
  }
  EchoReply Call(const EchoRequest& request, std::vector<int> fds = {},
                 std::vector<UniqueFd>* reply_fds = nullptr) {
    EchoReply reply;
    absl::Status status = client_->Send(request, fds);
    EXPECT_TRUE(status.ok()) << status;
    std::vector<UniqueFd> ignored;
    status = client_->Receive(&reply, reply_fds ? reply_fds : &ignored);
    EXPECT_TRUE(status.ok()) << status;
    return reply;
  }
  // After a protocol error: the error reply, then end of file.
  EchoReply ExpectFinalError(const EchoRequest& request) {
    EchoReply reply = Call(request);
    EXPECT_TRUE(reply.has_error()) << reply.DebugString();
    EchoReply more;
    EXPECT_EQ(client_->Receive(&more).code(), absl::StatusCode::kOutOfRange);
    return reply;
  }

  std::unique_ptr<Channel> client_, server_;
  std::unique_ptr<EchoDispatcher> dispatcher_;
  std::thread thread_;
  absl::Status served_;
};

TEST_F(DispatcherTest, ConversationThroughTheStates) {
  EchoRequest open = Request(1);
  open.mutable_open();
  EchoReply reply = Call(open);
  EXPECT_EQ(reply.seq(), 1u);
  EXPECT_TRUE(reply.has_opened());

  EchoRequest echo = Request(2);
  echo.mutable_echo()->set_text("hi");
  reply = Call(echo);
  EXPECT_EQ(reply.seq(), 2u);
  EXPECT_EQ(reply.echoed().text(), "hi");

  EchoRequest close = Request(3);
  close.mutable_close();
  reply = Call(close);
  EXPECT_TRUE(reply.has_closed());

  EXPECT_TRUE(Finish().ok()) << served_;
  EXPECT_EQ(dispatcher_->state(), kEchoClosed);
}

TEST_F(DispatcherTest, HandlerErrorIsAnErrorReplyAndTheChannelGoesOn) {
  EchoRequest open = Request(1);
  open.mutable_open();
  Call(open);
  EchoRequest echo = Request(2);
  echo.mutable_echo()->set_text("fail");
  EchoReply reply = Call(echo);
  EXPECT_EQ(reply.seq(), 2u);
  ASSERT_TRUE(reply.has_error());
  EXPECT_EQ(reply.error().code(),
            static_cast<int>(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(reply.error().message(), "asked to fail");
  echo = Request(3);
  echo.mutable_echo()->set_text("again");
  EXPECT_EQ(Call(echo).echoed().text(), "again");
  EXPECT_TRUE(Finish().ok());
}

TEST_F(DispatcherTest, DescriptorsBothWays) {
  EchoRequest open = Request(1);
  open.mutable_open();
  Call(open);

  int ends[2];
  ASSERT_EQ(::pipe2(ends, O_CLOEXEC), 0);
  UniqueFd read_end(ends[0]), write_end(ends[1]);
  EchoRequest write = Request(2);
  write.mutable_write_to_fd()->set_text("written by the server");
  EXPECT_EQ(Call(write, {write_end.get()}).written().bytes(), 21);
  write_end.Reset();
  auto text = ReadAll(read_end.get());
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "written by the server");

  EchoRequest make = Request(3);
  make.mutable_make_pipe()->set_text("from the pipe");
  std::vector<UniqueFd> fds;
  EchoReply reply = Call(make, {}, &fds);
  EXPECT_TRUE(reply.has_pipe_made());
  ASSERT_EQ(fds.size(), 1u);
  text = ReadAll(fds[0].get());
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "from the pipe");
  EXPECT_TRUE(Finish().ok());
}

TEST_F(DispatcherTest, UnclaimedDescriptorsAreClosed) {
  EchoRequest open = Request(1);
  open.mutable_open();
  int ends[2];
  ASSERT_EQ(::pipe2(ends, O_CLOEXEC), 0);
  UniqueFd read_end(ends[0]), write_end(ends[1]);
  // "open" takes no descriptor: the server must close the one it got
  // before it replies.
  Call(open, {write_end.get()});
  write_end.Reset();
  struct pollfd p = {read_end.get(), POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 0), 1);
  EXPECT_TRUE(p.revents & POLLHUP);
  EXPECT_TRUE(Finish().ok());
}

TEST_F(DispatcherTest, VerbInTheWrongStateEndsTheChannel) {
  EchoRequest echo = Request(1);
  echo.mutable_echo()->set_text("too early");
  EchoReply reply = ExpectFinalError(echo);
  EXPECT_EQ(reply.error().code(),
            static_cast<int>(absl::StatusCode::kFailedPrecondition));
  absl::Status status = Served();
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(status.message(),
            "echo client: verb 'echo' is not allowed in state 'new' (only in "
            "state 'open')");
  EXPECT_EQ(reply.error().message(), status.message());
}

TEST_F(DispatcherTest, UnknownVerbEndsTheChannel) {
  // "hang" is in the schema but this dispatcher has no row for it.
  EchoRequest hang = Request(1);
  hang.mutable_hang();
  ExpectFinalError(hang);
  absl::Status status = Served();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "echo client: unknown verb 'hang' (seq 1, in state 'new')");
}

TEST_F(DispatcherTest, RequestWithoutAKnownVerbEndsTheChannel) {
  // Field 99: a verb from a newer schema, unknown here.
  std::string body =
      std::string("\x08\x01", 2) + std::string("\x9a\x06\x00", 3);
  ASSERT_TRUE(SendRaw(client_->fd(), LengthPrefix(body.size()) + body).ok());
  absl::Status status = Served();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("unknown verb (none that this side knows)"));
}

TEST_F(DispatcherTest, WrongSeqEndsTheChannel) {
  EchoRequest open = Request(5);
  open.mutable_open();
  ExpectFinalError(open);
  absl::Status status = Served();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "echo client: verb 'open' with seq 5 where seq 1 was expected (in "
            "state 'new')");
}

TEST_F(DispatcherTest, RepeatedSeqEndsTheChannel) {
  EchoRequest open = Request(1);
  open.mutable_open();
  Call(open);
  EchoRequest echo = Request(1);
  echo.mutable_echo();
  ExpectFinalError(echo);
  EXPECT_THAT(std::string(Served().message()),
              HasSubstr("with seq 1 where seq 2 was expected"));
}

TEST_F(DispatcherTest, BadFrameEndsTheChannelWithTheState) {
  ASSERT_TRUE(SendRaw(client_->fd(), LengthPrefix(2000000)).ok());
  EchoReply reply;
  ASSERT_TRUE(client_->Receive(&reply).ok());
  EXPECT_EQ(reply.error().code(),
            static_cast<int>(absl::StatusCode::kResourceExhausted));
  absl::Status status = Served();
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(status.message(),
            "echo client: frame of 2000000 bytes over the 1048576-byte limit "
            "(in state 'new')");
}

TEST_F(DispatcherTest, TruncatedFrameEndsTheChannel) {
  ASSERT_TRUE(SendRaw(client_->fd(), LengthPrefix(10) + "abc").ok());
  ASSERT_EQ(::shutdown(client_->fd(), SHUT_WR), 0);
  EXPECT_EQ(Served().code(), absl::StatusCode::kDataLoss);
}

TEST(DispatcherStopTest, StopAfterReplyEndsServeAfterTheReply) {
  auto pair = MakeSocketPair();
  ASSERT_TRUE(pair.ok());
  Channel client(std::move(pair->first)), server(std::move(pair->second));
  EchoDispatcher dispatcher;
  dispatcher.On(EchoRequest::kClose, {0},
                [&dispatcher](const EchoRequest&, std::vector<UniqueFd>&,
                              EchoReply* reply) {
                  reply->mutable_closed();
                  dispatcher.StopAfterReply();
                  return absl::OkStatus();
                });
  EchoRequest close;
  close.set_seq(1);
  close.mutable_close();
  ASSERT_TRUE(client.Send(close).ok());
  // The client has not closed: Serve returns because the handler said so.
  EXPECT_TRUE(dispatcher.Serve(server).ok());
  EchoReply reply;
  ASSERT_TRUE(client.Receive(&reply).ok());
  EXPECT_TRUE(reply.has_closed());
}

TEST(DispatcherTimeoutTest, TimeoutBeforeAFrameKeepsTheChannel) {
  auto pair = MakeSocketPair();
  ASSERT_TRUE(pair.ok());
  Channel client(std::move(pair->first)), server(std::move(pair->second));
  struct timeval timeout = {0, 10000};
  ASSERT_EQ(::setsockopt(server.fd(), SOL_SOCKET, SO_RCVTIMEO, &timeout,
                         sizeof(timeout)),
            0);
  std::unique_ptr<EchoDispatcher> dispatcher = MakeEchoDispatcher();
  EXPECT_EQ(dispatcher->ServeOne(server).code(),
            absl::StatusCode::kDeadlineExceeded);
  EXPECT_TRUE(server.status().ok());
  EchoRequest open;
  open.set_seq(1);
  open.mutable_open();
  ASSERT_TRUE(client.Send(open).ok());
  EXPECT_TRUE(dispatcher->ServeOne(server).ok());
  EchoReply reply;
  ASSERT_TRUE(client.Receive(&reply).ok());
  EXPECT_TRUE(reply.has_opened());
}

TEST(DispatcherSetupTest, VerbRegisteredTwiceIsAnError) {
  EchoDispatcher dispatcher;
  auto ok = [](const EchoRequest&, std::vector<UniqueFd>&, EchoReply*) {
    return absl::OkStatus();
  };
  dispatcher.On(EchoRequest::kOpen, {0}, ok).On(EchoRequest::kOpen, {1}, ok);
  auto pair = MakeSocketPair();
  ASSERT_TRUE(pair.ok());
  Channel channel(std::move(pair->first));
  absl::Status status = dispatcher.Serve(channel);
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("'open' registered twice"));
}

}  // namespace
}  // namespace ipc
}  // namespace garuda
