#include "lib/budget/server.h"

#include <poll.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <cerrno>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/base/errno_status.h"
#include "lib/base/files.h"
#include "lib/base/json_message.h"
#include "lib/base/status_macros.h"
#include "lib/ipc/helper_process.h"
#include "lib/lockdown/lockdown.h"

namespace garuda {
namespace budget {
namespace {

constexpr int kServing = 0;

absl::Status CheckLabel(const std::string& label, const char* what) {
  if (label.size() > kMaxLabelBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " of ", label.size(), " bytes is over the ",
                     kMaxLabelBytes, "-byte limit"));
  }
  return absl::OkStatus();
}

ipc::ChannelOptions AgentChannelOptions(AgentId agent) {
  ipc::ChannelOptions options;
  options.peer_name = agent == kTopAgent ? std::string("agent")
                                         : absl::StrCat("child agent ", agent);
  options.max_frame_bytes = 1 << 20;
  options.max_fds_per_frame = 1;
  return options;
}

// A client that sends part of a frame and stops would hold the one thread
// that serves everyone: a frame must arrive whole within this time.
absl::Status SetReceiveTimeout(int fd) {
  struct timeval timeout = {5, 0};
  if (::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout)) !=
      0) {
    return LastErrnoStatus("setsockopt(SO_RCVTIMEO)");
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status BudgetServer::Commit() {
  absl::Status status = ledger_->Commit();
  if (!status.ok() && fatal_.ok()) fatal_ = status;
  return status;
}

std::unique_ptr<BudgetServer::Connection> BudgetServer::Connect(
    AgentId agent, ipc::Channel channel) {
  auto connection = std::unique_ptr<Connection>(
      new Connection{agent, std::move(channel), Dispatcher(kServing)});
  Dispatcher& dispatcher = connection->dispatcher;
  dispatcher.NameState(kServing, "serving");
  dispatcher.On(
      BudgetRequest::kReserve, {kServing},
      [this, agent](const BudgetRequest& request, std::vector<UniqueFd>&,
                    BudgetReply* reply) -> absl::Status {
        const Reserve& reserve = request.reserve();
        RETURN_IF_ERROR(CheckLabel(reserve.purpose(), "purpose"));
        RETURN_IF_ERROR(CheckLabel(reserve.request_id(), "request id"));
        ASSIGN_OR_RETURN(
            ReserveResult result,
            ledger_->Reserve(agent, reserve.tokens(), reserve.purpose(),
                             reserve.request_id()));
        RETURN_IF_ERROR(Commit());
        Reserved* out = reply->mutable_reserved();
        out->set_granted(result.granted);
        out->set_reservation(result.reservation);
        out->set_left(result.left);
        if (!result.granted) out->set_stop_reason(kTokenBudget);
        return absl::OkStatus();
      });
  dispatcher.On(
      BudgetRequest::kSettle, {kServing},
      [this, agent](const BudgetRequest& request, std::vector<UniqueFd>&,
                    BudgetReply* reply) -> absl::Status {
        const Settle& settle = request.settle();
        ASSIGN_OR_RETURN(
            SettleResult result,
            ledger_->Settle(agent, settle.reservation(), settle.used(),
                            settle.usage_reported()));
        RETURN_IF_ERROR(Commit());
        reply->mutable_settled()->set_charged(result.charged);
        reply->mutable_settled()->set_left(result.left);
        return absl::OkStatus();
      });
  dispatcher.OnWithReplyFds(
      BudgetRequest::kOpenChild, {kServing},
      [this, agent](const BudgetRequest& request, std::vector<UniqueFd>&,
                    BudgetReply* reply,
                    std::vector<UniqueFd>* reply_fds) -> absl::Status {
        const OpenChild& open = request.open_child();
        RETURN_IF_ERROR(CheckLabel(open.report_id(), "report id"));
        if (connections_.size() + added_.size() >= kMaxChannels) {
          return absl::ResourceExhaustedError(absl::StrCat(
              "OpenChild: ", kMaxChannels, " agent channels are open"));
        }
        // The channel first: once the ledger grants a lease, nothing may fail
        // before the parent learns the child's id (it could not close it).
        ASSIGN_OR_RETURN(auto pair, ipc::MakeSocketPair());
        RETURN_IF_ERROR(SetReceiveTimeout(pair.first.get()));
        ASSIGN_OR_RETURN(
            OpenChildResult result,
            ledger_->OpenChild(agent, open.limit(), open.report_id()));
        RETURN_IF_ERROR(Commit());
        ChildOpened* out = reply->mutable_child_opened();
        out->set_granted(result.granted);
        out->set_left(result.left);
        if (!result.granted) {
          out->set_stop_reason(kTokenBudget);
          return absl::OkStatus();
        }
        out->set_child(result.child);
        out->set_lease(result.lease);
        added_.push_back(Connect(
            result.child, ipc::Channel(std::move(pair.first),
                                       AgentChannelOptions(result.child))));
        reply_fds->push_back(std::move(pair.second));
        return absl::OkStatus();
      });
  dispatcher.On(
      BudgetRequest::kCloseChild, {kServing},
      [this, agent](const BudgetRequest& request, std::vector<UniqueFd>&,
                    BudgetReply* reply) -> absl::Status {
        const CloseChild& close = request.close_child();
        RETURN_IF_ERROR(CheckLabel(close.report().report_id(), "report id"));
        ASSIGN_OR_RETURN(
            CloseChildResult result,
            ledger_->CloseChild(agent, close.child(), close.report()));
        RETURN_IF_ERROR(Commit());
        ChildClosed* out = reply->mutable_child_closed();
        out->set_charged(result.charged);
        out->set_returned(result.returned);
        out->set_left(result.left);
        return absl::OkStatus();
      });
  dispatcher.On(
      BudgetRequest::kSetFloor, {kServing},
      [this, agent](const BudgetRequest& request, std::vector<UniqueFd>&,
                    BudgetReply* reply) -> absl::Status {
        ASSIGN_OR_RETURN(
            int64_t left,
            ledger_->SetFloor(agent, request.set_floor().tokens()));
        RETURN_IF_ERROR(Commit());
        reply->mutable_floor_set()->set_floor(request.set_floor().tokens());
        reply->mutable_floor_set()->set_left(left);
        return absl::OkStatus();
      });
  dispatcher.On(BudgetRequest::kStatus, {kServing},
                [this](const BudgetRequest&, std::vector<UniqueFd>&,
                       BudgetReply* reply) -> absl::Status {
                  *reply->mutable_status() = ledger_->ledger().Status();
                  return absl::OkStatus();
                });
  return connection;
}

absl::Status BudgetServer::Serve(ipc::Channel top) {
  absl::Status status = ServeAll(std::move(top));
  // Every channel ends with the server, so each client sees at once that no
  // reservation can be made any more.
  connections_.clear();
  added_.clear();
  return status;
}

absl::Status BudgetServer::ServeAll(ipc::Channel top) {
  RETURN_IF_ERROR(SetReceiveTimeout(top.fd()));
  connections_.push_back(Connect(kTopAgent, std::move(top)));
  std::vector<struct pollfd> polled;
  while (true) {
    polled.clear();
    for (const auto& connection : connections_) {
      polled.push_back({connection->channel.fd(), POLLIN, 0});
    }
    int ready = ::poll(polled.data(), polled.size(), -1);
    if (ready < 0) {
      if (errno == EINTR) continue;
      return LastErrnoStatus("poll(agent channels)");
    }
    std::vector<bool> ended(connections_.size(), false);
    for (size_t i = 0; i < polled.size(); ++i) {
      if (polled[i].revents == 0) continue;
      Connection& connection = *connections_[i];
      absl::Status status = connection.dispatcher.ServeOne(connection.channel);
      if (!fatal_.ok()) return fatal_;
      if (status.ok()) continue;
      if (connection.agent == kTopAgent) {
        // The top agent hung up: the session is over.
        if (absl::IsOutOfRange(status)) return ledger_->Commit();
        return status;
      }
      // A child's channel ended (its process exited, or it broke the
      // protocol). Its lease stays held until its parent closes it.
      ended[i] = true;
    }
    std::vector<std::unique_ptr<Connection>> kept;
    for (size_t i = 0; i < connections_.size(); ++i) {
      if (!ended[i]) kept.push_back(std::move(connections_[i]));
    }
    for (auto& connection : added_) kept.push_back(std::move(connection));
    added_.clear();
    connections_ = std::move(kept);
  }
}

absl::Status RunServe(const ServeOptions& options) {
  ASSIGN_OR_RETURN(std::string directory,
                   SessionDirectory(options.home, options.session));
  ASSIGN_OR_RETURN(
      ipc::Channel top,
      ipc::ChannelFromFd(options.channel_fd, AgentChannelOptions(kTopAgent)));
  ASSIGN_OR_RETURN(
      std::unique_ptr<JournaledLedger> ledger,
      JournaledLedger::Open({JournalPath(directory), options.limit}));
  if (options.log) {
    for (const std::string& note : ledger->start_notes()) options.log(note);
  }
  // Everything the role needs is open (the journal, the channel); from here
  // on a bug cannot write outside the session folder nor reach a network.
  LockdownOptions lockdown;
  lockdown.role = "budgeter";
  lockdown.writable_paths = {directory};
  lockdown.allow_network = false;
  if (!options.accept_weaker_lockdown.empty()) {
    lockdown.accept_weaker =
        AcceptWeakerLockdown{options.accept_weaker_lockdown};
  }
  absl::StatusOr<LockdownReport> report = LockDown(lockdown);
  if (!report.ok()) {
    return absl::Status(
        report.status().code(),
        absl::StrCat(report.status().message(),
                     " (--accept-weaker-lockdown=WHY runs anyway)"));
  }
  if (!report->weaker.empty() && options.log) {
    options.log(absl::StrCat("weaker lockdown: ", report->weaker));
  }
  BudgetServer server(ledger.get());
  return server.Serve(std::move(top));
}

std::string FormatStatus(const BudgetStatus& status) {
  std::string out = absl::StrFormat(
      "limit %d  spent %d  reserved %d  leased %d  left %d  floor %d\n",
      status.limit(), status.spent(), status.reserved(), status.leased(),
      status.left(), status.floor());
  absl::StrAppendFormat(
      &out, "%-6s %-6s %-20s %-6s %10s %10s %10s %10s %10s %8s %7s\n", "agent",
      "parent", "report", "state", "lease", "spent", "reserved", "unreported",
      "children", "requests", "refused");
  for (const AgentUsage& agent : status.agents()) {
    const bool top = agent.agent() == kTopAgent;
    absl::StrAppendFormat(
        &out, "%-6d %-6s %-20s %-6s %10d %10d %10d %10d %10d %8d %7d\n",
        agent.agent(), top ? "-" : absl::StrCat(agent.parent()),
        top ? "(top)" : agent.report_id(), agent.open() ? "open" : "closed",
        agent.lease(), agent.spent(), agent.reserved(), agent.unreported(),
        agent.children(), agent.requests(), agent.refused());
    if (agent.overrun() > 0) {
      absl::StrAppendFormat(&out,
                            "       overrun: the provider reported %d tokens "
                            "above this agent's reservations\n",
                            agent.overrun());
    }
  }
  return out;
}

absl::StatusOr<std::string> StatusReport(const std::string& home,
                                         const std::string& session,
                                         bool json) {
  ASSIGN_OR_RETURN(std::string directory, SessionDirectory(home, session));
  const std::string path = JournalPath(directory);
  ASSIGN_OR_RETURN(UniqueFd fd, OpenFile(path, O_RDONLY));
  // A budgeter serving the session holds an exclusive lock on its journal.
  const bool serving = ::flock(fd.get(), LOCK_SH | LOCK_NB) != 0;
  ASSIGN_OR_RETURN(std::string text, ReadAll(fd.get()));
  ASSIGN_OR_RETURN(Replay replay, ReplayJournal(text, path));
  BudgetStatus status = replay.ledger.Status();
  if (json) return absl::StrCat(MessageToJsonLine(status), "\n");
  std::string out = absl::StrCat("session ", session, " (", path, ")\n",
                                 FormatStatus(status));
  if (!serving && status.reserved() + status.leased() > 0) {
    absl::StrAppend(&out, "no budgeter is serving this session: the ",
                    status.reserved(),
                    " reserved tokens count as spent when it resumes\n");
  }
  return out;
}

}  // namespace budget
}  // namespace garuda
