// The proxy process's channel in one process (ProxyProcess on a thread,
// a socketpair to it): Configure first and once, Attach with its hand-off
// socket, a listener that arrives on it served, anything else on it ignored,
// Detach returning what was asked for.
#include "lib/netproxy/proxy_service.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <set>
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "lib/base/unique_fd.h"
#include "lib/ipc/channel.h"
#include "proto/netproxy_service.pb.h"

namespace garuda {
namespace netproxy {
namespace {

class ProxyServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto pair = ipc::MakeSocketPair();
    ASSERT_TRUE(pair.ok());
    int served_fd = pair->second.Release();
    thread_ = std::thread([this, served_fd] {
      // main.cc's steps: open, lock down (here: note the ports), serve.
      absl::StatusOr<std::unique_ptr<ProxyProcess>> opened =
          ProxyProcess::Open(served_fd);
      if (!opened.ok()) {
        served_ = opened.status();
        return;
      }
      RoleNeeds needs = (*opened)->Needs();
      locked_ports_ = std::set<uint16_t>(needs.tcp_connect_ports.begin(),
                                         needs.tcp_connect_ports.end());
      served_ = (*opened)->Serve();
    });
    channel_ = std::make_unique<ipc::Channel>(std::move(pair->first));
  }
  void TearDown() override {
    channel_.reset();  // the proxy ends when the stager closes the channel
    thread_.join();
  }
  proxy::ProxyServiceReply Call(proxy::ProxyServiceRequest request,
                                std::vector<int> fds = {}) {
    request.set_seq(++seq_);
    EXPECT_TRUE(channel_->Send(request, fds).ok());
    proxy::ProxyServiceReply reply;
    EXPECT_TRUE(channel_->Receive(&reply).ok());
    return reply;
  }
  proxy::ProxyServiceReply Configure() {
    proxy::ProxyServiceRequest request;
    request.mutable_configure()->add_allowed_domains("allowed.test");
    request.mutable_configure()->add_denied_domains("denied.test");
    request.mutable_configure()->add_allowed_ports(443);
    return Call(request);
  }
  proxy::ProxyServiceReply Attach(uint64_t id, std::vector<int> fds) {
    proxy::ProxyServiceRequest request;
    request.mutable_attach()->set_command(id);
    return Call(request, fds);
  }
  proxy::ProxyServiceReply Detach(uint64_t id) {
    proxy::ProxyServiceRequest request;
    request.mutable_detach()->set_command(id);
    return Call(request);
  }

  std::thread thread_;
  std::unique_ptr<ipc::Channel> channel_;
  absl::Status served_;
  std::set<uint16_t> locked_ports_;
  uint64_t seq_ = 0;
};

void SendFd(int socket, int fd) {
  char byte = 'L';
  ASSERT_EQ(ipc::SendWithDescriptors(socket, &byte, 1, {&fd, 1}), 1);
}

TEST_F(ProxyServiceTest, AnAttachedListenerIsServedAndDetachSaysWhatWasAsked) {
  ASSERT_TRUE(Configure().has_configured());
  EXPECT_EQ(locked_ports_, (std::set<uint16_t>{443}));
  auto handoff = ipc::MakeSocketPair();
  ASSERT_TRUE(handoff.ok());
  ASSERT_TRUE(Attach(1, {handoff->first.get()}).has_attached());
  UniqueFd listener(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in address = {};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(listener.get(), reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  socklen_t length = sizeof address;
  ::getsockname(listener.get(), reinterpret_cast<sockaddr*>(&address), &length);
  ASSERT_EQ(::listen(listener.get(), 4), 0);
  SendFd(handoff->second.get(), listener.get());
  UniqueFd client(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  ASSERT_EQ(::connect(client.get(), reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  const std::string request = "CONNECT denied.test:443 HTTP/1.1\r\n\r\n";
  ASSERT_EQ(::send(client.get(), request.data(), request.size(), 0),
            static_cast<ssize_t>(request.size()));
  std::string answer(4096, '\0');
  ssize_t got = ::recv(client.get(), answer.data(), answer.size(), MSG_WAITALL);
  ASSERT_GT(got, 0);
  answer.resize(got);
  EXPECT_TRUE(absl::StartsWith(answer, "HTTP/1.1 403")) << answer;
  proxy::ProxyServiceReply detached = Detach(1);
  ASSERT_EQ(detached.detached().events_size(), 1) << detached.DebugString();
  EXPECT_EQ(detached.detached().events(0).host(), "denied.test");
  EXPECT_EQ(detached.detached().events(0).why(), "in sandbox.deniedDomains");
  EXPECT_FALSE(detached.detached().events(0).allowed());
}

TEST_F(ProxyServiceTest, AVerbBeforeConfigureEndsTheChannel) {
  // Attach before Configure ends the channel.
  auto handoff = ipc::MakeSocketPair();
  ASSERT_TRUE(handoff.ok());
  proxy::ProxyServiceReply early = Attach(1, {handoff->first.get()});
  EXPECT_TRUE(early.has_error());
  thread_.join();
  EXPECT_FALSE(served_.ok());
  EXPECT_TRUE(absl::StrContains(served_.message(), "is not allowed in state 'new'"))
      << served_;
  thread_ = std::thread([] {});
}

TEST_F(ProxyServiceTest, AttachNeedsItsSocketAndANonListenerIsNotServed) {
  ASSERT_TRUE(Configure().has_configured());
  EXPECT_TRUE(Attach(1, {}).has_error());
  auto handoff = ipc::MakeSocketPair();
  ASSERT_TRUE(handoff.ok());
  ASSERT_TRUE(Attach(2, {handoff->first.get()}).has_attached());
  EXPECT_TRUE(Attach(2, {handoff->first.get()}).has_error());  // twice
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  SendFd(handoff->second.get(), pipe_fds[0]);  // not a listening socket
  proxy::ProxyServiceReply detached = Detach(2);
  EXPECT_TRUE(detached.has_detached());
  EXPECT_EQ(detached.detached().events_size(), 0);
  EXPECT_TRUE(Detach(2).has_error());  // gone
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
}

}  // namespace
}  // namespace netproxy
}  // namespace garuda
