#include "lib/netproxy/proxy_service.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "lib/base/status_macros.h"
#include "lib/base/unique_fd.h"
#include "lib/ipc/channel.h"
#include "lib/ipc/dispatcher.h"
#include "lib/ipc/helper_process.h"
#include "lib/lockdown/roles.h"
#include "lib/netproxy/server.h"
#include "lib/rules/domain_rules.h"
#include "proto/netproxy_service.pb.h"

namespace garuda {
namespace netproxy {
namespace {

enum State { kNew = 0, kServing = 1 };

// One descriptor from `socket` (SCM_RIGHTS on a one-byte message), or -1
// when the peer closed or sent something else.
int ReceiveOneFd(int socket) {
  char byte;
  struct iovec io = {&byte, 1};
  alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof(int))];
  struct msghdr message = {};
  message.msg_iov = &io;
  message.msg_iovlen = 1;
  message.msg_control = control;
  message.msg_controllen = sizeof control;
  ssize_t got;
  do {
    got = ::recvmsg(socket, &message, MSG_CMSG_CLOEXEC);
  } while (got < 0 && errno == EINTR);
  if (got != 1 || (message.msg_flags & MSG_CTRUNC)) return -1;
  struct cmsghdr* header = CMSG_FIRSTHDR(&message);
  if (header == nullptr || header->cmsg_level != SOL_SOCKET ||
      header->cmsg_type != SCM_RIGHTS ||
      header->cmsg_len != CMSG_LEN(sizeof(int))) {
    return -1;
  }
  int fd;
  std::memcpy(&fd, CMSG_DATA(header), sizeof fd);
  // Only a listening TCP socket is served; anything else is closed.
  int listening = 0, type = 0;
  socklen_t size = sizeof listening;
  if (::getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &size) != 0 ||
      !listening ||
      (size = sizeof type,
       ::getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &size) != 0) ||
      type != SOCK_STREAM) {
    ::close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

// One command's sandbox: its events, and the thread that serves it.
class ProxyProcess::Attachment {
 public:
  Attachment(ProxyOptions options, UniqueFd handoff)
      : handoff_(std::move(handoff)) {
    options.on_event = [this](const ProxyEvent& event) { Record(event); };
    server_ = std::make_unique<ProxyServer>(std::move(options));
    thread_ = std::thread([this] { Run(); });
  }

  // Stops serving and returns what the command asked for.
  proxy::Detached Detach() {
    ::shutdown(handoff_.get(), SHUT_RDWR);  // wakes a wait for the listener
    server_->Stop();
    thread_.join();
    proxy::Detached detached;
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& [key, count] : events_) {
      proxy::NetworkEvent* event = detached.add_events();
      event->set_host(std::get<0>(key));
      event->set_port(std::get<1>(key));
      event->set_allowed(std::get<2>(key));
      event->set_why(std::get<3>(key));
      event->set_count(count);
    }
    return detached;
  }

 private:
  void Run() {
    UniqueFd listener(ReceiveOneFd(handoff_.get()));
    if (!listener.valid()) return;  // the sandbox never started
    server_->Serve(listener.get()).IgnoreError();
  }

  void Record(const ProxyEvent& event) {
    std::lock_guard<std::mutex> lock(mutex_);
    // A command that loops on one host makes one entry, not thousands.
    if (events_.size() >= 1000) return;
    ++events_[std::make_tuple(event.host, event.port, event.allowed,
                              event.allowed ? std::string() : event.why)];
  }

  UniqueFd handoff_;
  std::unique_ptr<ProxyServer> server_;
  std::thread thread_;
  std::mutex mutex_;
  std::map<std::tuple<std::string, uint16_t, bool, std::string>, uint32_t>
      events_;
};

std::map<std::string, std::string> ParseNameMap(const std::string& text) {
  std::map<std::string, std::string> map;
  for (absl::string_view entry : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    size_t equals = entry.find('=');
    if (equals == absl::string_view::npos) continue;
    std::string name = DomainRules::Normalize(entry.substr(0, equals));
    if (!name.empty()) map[name] = std::string(entry.substr(equals + 1));
  }
  return map;
}

absl::StatusOr<std::unique_ptr<ProxyProcess>> ProxyProcess::Open(
    int channel_fd) {
  ASSIGN_OR_RETURN(
      ipc::Channel channel,
      ipc::ChannelFromFd(channel_fd,
                         ipc::ChannelOptions{"garuda-stager", 1 << 20, 1}));
  std::unique_ptr<ProxyProcess> process(new ProxyProcess(std::move(channel)));
  RETURN_IF_ERROR(process->ReadConfigure());
  return process;
}

ProxyProcess::ProxyProcess(ipc::Channel channel)
    : channel_(std::move(channel)), dispatcher_(kNew) {
  // The test seams, read before the lockdown.
  if (const char* map = std::getenv(kTestNameMapVariable)) {
    base_.test_name_map = ParseNameMap(map);
  }
  if (const char* all = std::getenv(kTestAllowEverythingVariable)) {
    base_.test_allow_everything = std::string(all) == "1";
  }
  dispatcher_.NameState(kNew, "new").NameState(kServing, "serving");
  dispatcher_.On(
      proxy::ProxyServiceRequest::kConfigure, {kNew},
      [this](const proxy::ProxyServiceRequest& request, std::vector<UniqueFd>&,
             proxy::ProxyServiceReply* reply) {
        return OnConfigure(request.configure(), reply);
      },
      kServing);
  dispatcher_.On(
      proxy::ProxyServiceRequest::kAttach, {kServing},
      [this](const proxy::ProxyServiceRequest& request,
             std::vector<UniqueFd>& fds, proxy::ProxyServiceReply* reply) {
        return OnAttach(request.attach().command(), fds, reply);
      });
  dispatcher_.On(
      proxy::ProxyServiceRequest::kDetach, {kServing},
      [this](const proxy::ProxyServiceRequest& request, std::vector<UniqueFd>&,
             proxy::ProxyServiceReply* reply) {
        return OnDetach(request.detach().command(), reply);
      });
}

ProxyProcess::~ProxyProcess() {
  for (auto& [id, attachment] : attached_) attachment->Detach();
}

absl::Status ProxyProcess::ReadConfigure() {
  absl::Status first = dispatcher_.Handle(channel_, &configured_);
  if (absl::IsOutOfRange(first)) {
    ended_ = true;  // the stager closed the channel before Configure
    return absl::OkStatus();
  }
  RETURN_IF_ERROR(first);
  if (dispatcher_.state() != kServing) {
    RETURN_IF_ERROR(dispatcher_.Send(channel_, configured_));
    return absl::FailedPreconditionError(
        "garuda-stager proxy: the first request must be Configure");
  }
  return absl::OkStatus();
}

RoleNeeds ProxyProcess::Needs() const {
  RoleNeeds needs;
  needs.tcp_connect_ports.assign(base_.allowed_ports.begin(),
                                 base_.allowed_ports.end());
  return needs;
}

absl::Status ProxyProcess::Serve() {
  if (ended_) return absl::OkStatus();
  // The answer to Configure only now: a stager that hears "configured" has
  // a locked-down proxy.
  RETURN_IF_ERROR(dispatcher_.Send(channel_, configured_));
  absl::Status served = dispatcher_.Serve(channel_);
  for (auto& [id, attachment] : attached_) attachment->Detach();
  attached_.clear();
  return served;
}

absl::Status ProxyProcess::OnConfigure(const proxy::Configure& configure,
                                       proxy::ProxyServiceReply* reply) {
  std::vector<std::string> allowed(configure.allowed_domains().begin(),
                                   configure.allowed_domains().end());
  std::vector<std::string> denied(configure.denied_domains().begin(),
                                  configure.denied_domains().end());
  ASSIGN_OR_RETURN(base_.rules, DomainRules::Create(allowed, denied));
  base_.allowed_ports.clear();
  for (uint32_t port : configure.allowed_ports()) {
    if (port == 0 || port > 65535) {
      return absl::InvalidArgumentError(
          absl::StrCat("Configure: ", port, " is not a port"));
    }
    base_.allowed_ports.insert(static_cast<uint16_t>(port));
  }
  reply->mutable_configured();
  return absl::OkStatus();
}

absl::Status ProxyProcess::OnAttach(uint64_t id, std::vector<UniqueFd>& fds,
                                    proxy::ProxyServiceReply* reply) {
  if (fds.size() != 1) {
    return absl::InvalidArgumentError(
        "Attach comes with one descriptor: the sandbox's hand-off socket");
  }
  if (attached_.count(id)) {
    return absl::AlreadyExistsError(
        absl::StrCat("Attach: command ", id, " is attached already"));
  }
  attached_[id] = std::make_unique<Attachment>(base_, std::move(fds[0]));
  reply->mutable_attached();
  return absl::OkStatus();
}

absl::Status ProxyProcess::OnDetach(uint64_t id,
                                    proxy::ProxyServiceReply* reply) {
  auto it = attached_.find(id);
  if (it == attached_.end()) {
    return absl::NotFoundError(
        absl::StrCat("Detach: command ", id, " is not attached"));
  }
  *reply->mutable_detached() = it->second->Detach();
  attached_.erase(it);
  return absl::OkStatus();
}

}  // namespace netproxy
}  // namespace garuda
