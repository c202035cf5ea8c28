#include "lib/ipc/client.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <string>

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

}  // namespace
}  // namespace ipc
}  // namespace garuda
