#include "lib/ipc/client.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <string>
#include <thread>
#include <utility>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "lib/ipc/ipc_test.pb.h"

namespace garuda {
namespace ipc {
namespace {

using ipc_test::EchoReply;
using ipc_test::EchoRequest;
using EchoClient = Client<EchoRequest, EchoReply>;

std::unique_ptr<HelperProcess> StartEcho(bool wrong_seq = false) {
  HelperOptions options;
  options.argv = {
      JoinPath(JoinPath(getenv("TEST_SRCDIR"), getenv("TEST_WORKSPACE")),
               "lib/ipc/echo_helper"),
      "--channel-fd=3"};
  if (wrong_seq) options.argv.push_back("--wrong-seq");
  auto helper = HelperProcess::Spawn(options);
  EXPECT_TRUE(helper.ok()) << helper.status();
  return helper.ok() ? *std::move(helper) : nullptr;
}

EchoRequest Echo(const std::string& text) {
  EchoRequest request;
  request.mutable_echo()->set_text(text);
  return request;
}

TEST(ClientTest, NumbersRequestsAndReturnsTheirReplies) {
  std::unique_ptr<HelperProcess> helper = StartEcho();
  ASSERT_NE(helper, nullptr);
  EchoClient client(helper.get(), "echo_helper");
  EchoRequest open;
  open.mutable_open();
  absl::StatusOr<EchoReply> opened = client.Call(open);
  ASSERT_TRUE(opened.ok()) << opened.status();
  EXPECT_EQ(opened->seq(), 1u);
  absl::StatusOr<EchoReply> echoed = client.Call(Echo("hello"));
  ASSERT_TRUE(echoed.ok()) << echoed.status();
  EXPECT_EQ(echoed->seq(), 2u);
  EXPECT_EQ(echoed->echoed().text(), "hello");
}

// A handler's error comes back as a status named after the peer, and the
// channel goes on; the negative control is the same verb with its
// descriptor, which succeeds.
TEST(ClientTest, AnErrorReplyIsAStatusAndTheChannelGoesOn) {
  std::unique_ptr<HelperProcess> helper = StartEcho();
  ASSERT_NE(helper, nullptr);
  EchoClient client(helper.get(), "echo_helper");
  EchoRequest open;
  open.mutable_open();
  ASSERT_TRUE(client.Call(open).ok());
  EchoRequest write;
  write.mutable_write_to_fd()->set_text("x");
  absl::StatusOr<EchoReply> refused = client.Call(write);
  EXPECT_TRUE(absl::IsInvalidArgument(refused.status())) << refused.status();
  EXPECT_TRUE(absl::StartsWith(refused.status().message(), "echo_helper: "))
      << refused.status();
  UniqueFd null(::open("/dev/null", O_WRONLY | O_CLOEXEC));
  const int fds[] = {null.get()};
  absl::StatusOr<EchoReply> written = client.Call(write, nullptr, fds);
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_EQ(written->written().bytes(), 1);
}

TEST(ClientTest, AReplyToAnotherRequestIsDataLoss) {
  std::unique_ptr<HelperProcess> helper = StartEcho(/*wrong_seq=*/true);
  ASSERT_NE(helper, nullptr);
  EchoClient client(helper.get(), "echo_helper");
  absl::StatusOr<EchoReply> reply = client.Call(Echo("a"));
  EXPECT_TRUE(absl::IsDataLoss(reply.status())) << reply.status();
  EXPECT_TRUE(absl::StrContains(reply.status().message(),
                                "answered request 2 instead of 1"))
      << reply.status();
}

TEST(ClientTest, AHelperThatDiesIsUnavailable) {
  std::unique_ptr<HelperProcess> helper = StartEcho();
  ASSERT_NE(helper, nullptr);
  EchoClient client(helper.get(), "echo_helper");
  EchoRequest crash;
  crash.mutable_crash()->set_signal(9);
  absl::StatusOr<EchoReply> reply = client.Call(crash);
  EXPECT_TRUE(absl::IsUnavailable(reply.status())) << reply.status();
}

// Over a bare channel (a child agent's to the budgeter): the other end is a
// thread that answers one request with `answer`'s reply, or closes.
TEST(ChannelClientTest, TellsAnErrorReplyFromATransportFailure) {
  absl::StatusOr<std::pair<UniqueFd, UniqueFd>> pair = MakeSocketPair();
  ASSERT_TRUE(pair.ok()) << pair.status();
  EchoClient client(Channel(std::move(pair->first)), "budget server");
  Channel server(std::move(pair->second));
  auto answer_once = [&](int seq_offset, bool error, bool close) {
    return std::thread([&server, seq_offset, error, close] {
      EchoRequest request;
      if (!server.Receive(&request).ok()) return;
      if (close) {
        server.Close();
        return;
      }
      EchoReply reply;
      reply.set_seq(request.seq() + seq_offset);
      if (error) {
        reply.mutable_error()->set_code(
            static_cast<int>(absl::StatusCode::kResourceExhausted));
        reply.mutable_error()->set_message("over the limit");
      } else {
        reply.mutable_echoed()->set_text(request.echo().text());
      }
      server.Send(reply).IgnoreError();
    });
  };

  std::thread served = answer_once(0, false, false);
  absl::StatusOr<EchoReply> echoed = client.Call(Echo("a"));
  served.join();
  ASSERT_TRUE(echoed.ok()) << echoed.status();
  EXPECT_EQ(echoed->echoed().text(), "a");
  EXPECT_TRUE(client.transport().ok());

  // The peer's answer: a status, and the channel is fine.
  served = answer_once(0, true, false);
  absl::StatusOr<EchoReply> refused = client.Call(Echo("b"));
  served.join();
  EXPECT_TRUE(absl::IsResourceExhausted(refused.status())) << refused.status();
  EXPECT_EQ(refused.status().message(), "budget server: over the limit");
  EXPECT_TRUE(client.transport().ok()) << client.transport();

  // A reply to another request: the channel cannot be trusted.
  served = answer_once(1, false, false);
  absl::StatusOr<EchoReply> other = client.Call(Echo("c"));
  served.join();
  EXPECT_TRUE(absl::IsDataLoss(other.status())) << other.status();
  EXPECT_TRUE(absl::IsDataLoss(client.transport())) << client.transport();

  // The peer gone: a transport failure too.
  served = answer_once(0, false, true);
  absl::StatusOr<EchoReply> gone = client.Call(Echo("d"));
  served.join();
  EXPECT_FALSE(gone.ok());
  EXPECT_FALSE(client.transport().ok());
  EXPECT_EQ(client.transport(), gone.status());
}

}  // namespace
}  // namespace ipc
}  // namespace garuda
