#include "lib/budget/server.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/base/errno_status.h"
#include "lib/base/files.h"
#include "lib/base/json_message.h"
#include "lib/base/status_macros.h"
#include "lib/budget/client.h"
#include "lib/ipc/helper_process.h"

namespace garuda {
namespace budget {
namespace {

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
  // One read per request. A client sends no descriptors, and one that sends
  // its next request before its answer only finds it read ahead (the loop
  // below looks for such frames before it polls).
  options.read_ahead = true;
  return options;
}

// A client that sends part of a frame and stops would hold the one thread
// that serves everyone: a frame must arrive whole within this time.
constexpr std::chrono::milliseconds kWholeFrameWithin{5000};

absl::Status SetReceiveTimeout(int fd, std::chrono::milliseconds timeout) {
  struct timeval value = {
      static_cast<time_t>(timeout.count() / 1000),
      static_cast<suseconds_t>(timeout.count() % 1000 * 1000)};
  if (::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &value, sizeof(value)) != 0) {
    return LastErrnoStatus("setsockopt(SO_RCVTIMEO)");
  }
  return absl::OkStatus();
}

absl::Status NoDescriptors(const std::vector<UniqueFd>& fds) {
  if (fds.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(
      "a budget request carries no descriptors; the ones sent were closed");
}

}  // namespace

absl::Status BudgetServer::OnReserve(AgentId agent,
                                     const BudgetRequest& request,
                                     BudgetReply* reply) {
  const Reserve& reserve = request.reserve();
  RETURN_IF_ERROR(CheckLabel(reserve.purpose(), "purpose"));
  RETURN_IF_ERROR(CheckLabel(reserve.request_id(), "request id"));
  ASSIGN_OR_RETURN(ReserveResult result,
                   ledger_->Reserve(agent, reserve.tokens(), reserve.purpose(),
                                    reserve.request_id()));
  Reserved* out = reply->mutable_reserved();
  out->set_granted(result.granted);
  out->set_reservation(result.reservation);
  out->set_left(result.left);
  if (!result.granted) out->set_stop_reason(kTokenBudget);
  return absl::OkStatus();
}

absl::Status BudgetServer::OnSettle(AgentId agent, const BudgetRequest& request,
                                    BudgetReply* reply) {
  const Settle& settle = request.settle();
  ASSIGN_OR_RETURN(SettleResult result,
                   ledger_->Settle(agent, settle.reservation(), settle.used(),
                                   settle.usage_reported()));
  if (result.capped && log_) {
    log_(absl::StrCat("agent ", agent, " reported ", settle.used(),
                      " tokens for reservation ", settle.reservation(),
                      ", more than one request can cost; charged ",
                      result.charged,
                      " (the reservation plus the agent's whole lease), "
                      "which stops its grants"));
  }
  Settled* settled = reply->mutable_settled();
  settled->set_charged(result.charged);
  settled->set_left(result.left);
  if (result.capped) {
    settled->set_capped(true);
    settled->set_reported(settle.used());
  }
  return absl::OkStatus();
}

absl::Status BudgetServer::OnOpenChild(AgentId agent,
                                       const BudgetRequest& request,
                                       BudgetReply* reply,
                                       std::vector<UniqueFd>* reply_fds) {
  const OpenChild& open = request.open_child();
  RETURN_IF_ERROR(CheckLabel(open.report_id(), "report id"));
  if (connections_.size() + added_.size() >= kMaxChannels) {
    return absl::ResourceExhaustedError(
        absl::StrCat("OpenChild: ", kMaxChannels, " agent channels are open"));
  }
  // The channel first: once the ledger grants a lease, nothing may fail
  // before the parent learns the child's id (it could not close it).
  ASSIGN_OR_RETURN(auto pair, ipc::MakeSocketPair());
  RETURN_IF_ERROR(SetReceiveTimeout(pair.first.get(), kWholeFrameWithin));
  ASSIGN_OR_RETURN(OpenChildResult result,
                   ledger_->OpenChild(agent, open.limit(), open.report_id()));
  ChildOpened* out = reply->mutable_child_opened();
  out->set_granted(result.granted);
  out->set_left(result.left);
  if (!result.granted) {
    out->set_stop_reason(kTokenBudget);
    return absl::OkStatus();
  }
  out->set_child(result.child);
  out->set_lease(result.lease);
  added_.push_back(NewConnection(
      result.child,
      ipc::Channel(std::move(pair.first), AgentChannelOptions(result.child))));
  reply_fds->push_back(std::move(pair.second));
  return absl::OkStatus();
}

absl::Status BudgetServer::OnCloseChild(AgentId agent,
                                        const BudgetRequest& request,
                                        BudgetReply* reply) {
  const CloseChild& close = request.close_child();
  RETURN_IF_ERROR(CheckLabel(close.report().report_id(), "report id"));
  ASSIGN_OR_RETURN(CloseChildResult result,
                   ledger_->CloseChild(agent, close.child(), close.report()));
  ChildClosed* out = reply->mutable_child_closed();
  out->set_charged(result.charged);
  out->set_returned(result.returned);
  out->set_left(result.left);
  return absl::OkStatus();
}

absl::Status BudgetServer::OnSetFloor(AgentId agent,
                                      const BudgetRequest& request,
                                      BudgetReply* reply) {
  ASSIGN_OR_RETURN(int64_t left,
                   ledger_->SetFloor(agent, request.set_floor().tokens()));
  reply->mutable_floor_set()->set_floor(request.set_floor().tokens());
  reply->mutable_floor_set()->set_left(left);
  return absl::OkStatus();
}

absl::Status BudgetServer::OnExtendChild(AgentId agent,
                                         const BudgetRequest& request,
                                         BudgetReply* reply) {
  const ExtendChild& extend = request.extend_child();
  ASSIGN_OR_RETURN(
      ExtendChildResult result,
      ledger_->ExtendChild(agent, extend.child(), extend.tokens()));
  ChildExtended* out = reply->mutable_child_extended();
  out->set_granted(result.granted);
  out->set_lease(result.lease);
  out->set_left(result.left);
  return absl::OkStatus();
}

absl::Status BudgetServer::OnStatus(AgentId, const BudgetRequest&,
                                    BudgetReply* reply) {
  *reply->mutable_status() = ledger_->ledger().Status();
  return absl::OkStatus();
}

std::unique_ptr<BudgetServer::Connection> BudgetServer::NewConnection(
    AgentId agent, ipc::Channel channel) {
  auto connection = std::unique_ptr<Connection>(
      new Connection{agent, std::move(channel), Dispatcher()});
  // One state: every verb is allowed at any time; what the table adds is
  // the seq check and the end of the channel on an unknown verb. Each verb
  // goes straight to its method; none carries descriptors.
  using Verb = absl::Status (BudgetServer::*)(AgentId, const BudgetRequest&,
                                              BudgetReply*);
  auto plain = [this, agent](Verb verb) {
    return [this, agent, verb](const BudgetRequest& request,
                               std::vector<UniqueFd>& fds,
                               BudgetReply* reply) -> absl::Status {
      RETURN_IF_ERROR(NoDescriptors(fds));
      return (this->*verb)(agent, request, reply);
    };
  };
  Dispatcher& table = connection->dispatcher;
  table.On(BudgetRequest::kReserve, {0}, plain(&BudgetServer::OnReserve))
      .On(BudgetRequest::kSettle, {0}, plain(&BudgetServer::OnSettle))
      .On(BudgetRequest::kCloseChild, {0}, plain(&BudgetServer::OnCloseChild))
      .On(BudgetRequest::kSetFloor, {0}, plain(&BudgetServer::OnSetFloor))
      .On(BudgetRequest::kExtendChild, {0}, plain(&BudgetServer::OnExtendChild))
      .On(BudgetRequest::kStatus, {0}, plain(&BudgetServer::OnStatus))
      .OnWithReplyFds(
          BudgetRequest::kOpenChild, {0},
          [this, agent](const BudgetRequest& request,
                        std::vector<UniqueFd>& fds, BudgetReply* reply,
                        std::vector<UniqueFd>* reply_fds) -> absl::Status {
            RETURN_IF_ERROR(NoDescriptors(fds));
            return OnOpenChild(agent, request, reply, reply_fds);
          });
  connection->dispatcher.NameState(0, "serving");
  return connection;
}

absl::Status BudgetServer::ReadRequest(Connection& connection,
                                       std::vector<Answer>* answers) {
  Answer answer{&connection, {}};
  absl::Status status =
      connection.dispatcher.Handle(connection.channel, &answer.answer);
  // A wake-up with no frame after all times out and keeps the channel.
  if (absl::IsDeadlineExceeded(status) && connection.channel.status().ok()) {
    return absl::OkStatus();
  }
  if (!status.ok()) return status;
  answers->push_back(std::move(answer));
  return absl::OkStatus();
}

absl::Status BudgetServer::Serve(ipc::Channel top) {
  absl::Status status = ServeAll(std::move(top));
  // What is queued is written and synced before the clients learn that the
  // server has ended.
  absl::Status flushed = ledger_->Flush();
  if (status.ok()) status = flushed;
  // Every channel ends with the server, so each client sees at once that no
  // reservation can be made any more.
  connections_.clear();
  added_.clear();
  return status;
}

JournaledLedger::Clock::time_point BudgetServer::FlushDue() const {
  return std::min(last_request_ + kIdleBeforeFlush,
                  ledger_->dirty_since() + kLongestUnsynced);
}

int BudgetServer::PollTimeoutMs() const {
  if (!ledger_->flush_pending()) return -1;
  auto left = FlushDue() - JournaledLedger::Clock::now();
  if (left <= left.zero()) return 0;
  // Rounded up: waking before the flush is due would only poll again.
  return static_cast<int>(
      std::chrono::ceil<std::chrono::milliseconds>(left).count());
}

absl::Status BudgetServer::WaitAlone(Connection& connection) {
  // The receive timeout is the flush's timer: a read that times out before
  // a frame began keeps the channel (ReadRequest). A frame comes in one
  // sendmsg, so the shorter timeout never cuts one in the middle.
  const std::chrono::milliseconds wait =
      ledger_->flush_pending() ? kIdleBeforeFlush : kWholeFrameWithin;
  return connection.KeepReceiveTimeout(wait);
}

absl::Status BudgetServer::Connection::KeepReceiveTimeout(
    std::chrono::milliseconds timeout) {
  if (receive_timeout == timeout) return absl::OkStatus();
  RETURN_IF_ERROR(SetReceiveTimeout(channel.fd(), timeout));
  receive_timeout = timeout;
  return absl::OkStatus();
}

absl::Status BudgetServer::ServeAll(ipc::Channel top) {
  // Read blocking while it is alone (WaitAlone): a descriptor handed over
  // non-blocking would otherwise make every wait return at once.
  int flags = ::fcntl(top.fd(), F_GETFL);
  if (flags < 0 || ((flags & O_NONBLOCK) &&
                    ::fcntl(top.fd(), F_SETFL, flags & ~O_NONBLOCK) != 0)) {
    return LastErrnoStatus("fcntl(the top agent's channel)");
  }
  connections_.push_back(NewConnection(kTopAgent, std::move(top)));
  RETURN_IF_ERROR(connections_[0]->KeepReceiveTimeout(kWholeFrameWithin));
  // Kept from round to round: a round allocates nothing of its own.
  std::vector<struct pollfd> polled;
  std::vector<Answer> answers;
  std::vector<bool> ended;
  while (true) {
    polled.clear();
    bool buffered = false;  // a request already read ahead
    for (const auto& connection : connections_) {
      polled.push_back({connection->channel.fd(), POLLIN, 0});
      buffered = buffered || connection->channel.has_buffered_frame();
    }
    // The top agent alone (until it opens a child): it waits in the read
    // itself, which on a virtual machine answered 5 to 17 us sooner than
    // a poll(2) and a read (docs/budget.md). With more channels, one poll
    // waits on all of them.
    const bool alone = connections_.size() == 1;
    if (alone) {
      RETURN_IF_ERROR(WaitAlone(*connections_[0]));
      polled[0].revents = POLLIN;
    } else {
      RETURN_IF_ERROR(connections_[0]->KeepReceiveTimeout(kWholeFrameWithin));
      // Records not yet on disk: wake up to flush them once the server has
      // been idle a while (grouped fdatasync, never on an answer's path).
      int ready =
          ::poll(polled.data(), polled.size(), buffered ? 0 : PollTimeoutMs());
      if (ready < 0) {
        if (errno == EINTR) continue;
        return LastErrnoStatus("poll(agent channels)");
      }
      if (ready == 0 && !buffered) {
        RETURN_IF_ERROR(ledger_->Flush());
        continue;
      }
    }
    answers.clear();
    ended.assign(connections_.size(), false);
    bool any_ended = false;
    bool top_ended = false;
    absl::Status top_broken;
    for (size_t i = 0; i < polled.size(); ++i) {
      if (polled[i].revents == 0 &&
          !connections_[i]->channel.has_buffered_frame()) {
        continue;
      }
      absl::Status read = ReadRequest(*connections_[i], &answers);
      if (read.ok()) continue;
      // A child's channel ended (its process exited, or it broke the
      // protocol): its lease stays held until its parent closes it. The
      // top agent's: the session is over, with an error if it broke the
      // protocol.
      ended[i] = any_ended = true;
      const bool closed = absl::IsOutOfRange(read);
      if (connections_[i]->agent == kTopAgent) {
        top_ended = true;
        if (!closed) top_broken = read;
      } else if (!closed && log_) {
        log_(absl::StrCat("ended the channel of child agent ",
                          connections_[i]->agent, ": ", read.message()));
      }
    }
    if (alone && answers.empty() && !any_ended) {
      // The read's timeout ran out with nothing asked: idle, so flush.
      if (ledger_->flush_pending()) RETURN_IF_ERROR(ledger_->Flush());
      continue;
    }
    // At most one write for the whole round, before any answer (and an
    // fdatasync only when a closed child's lease returns).
    RETURN_IF_ERROR(ledger_->Commit());
    for (Answer& answer : answers) {
      Connection& connection = *answer.connection;
      if (connection.channel.fd() < 0) continue;  // ended this round
      if (!connection.dispatcher.Send(connection.channel, answer.answer).ok()) {
        for (size_t i = 0; i < connections_.size(); ++i) {
          if (connections_[i].get() == &connection) ended[i] = any_ended = true;
        }
      }
    }
    for (size_t i = 0; i < connections_.size(); ++i) {
      if (ended[i] && connections_[i]->agent == kTopAgent) top_ended = true;
    }
    if (top_ended) return top_broken;
    // Busy all along while records waited kLongestUnsynced: flush now,
    // after the answers.
    last_request_ = JournaledLedger::Clock::now();
    if (ledger_->flush_pending() &&
        last_request_ >= ledger_->dirty_since() + kLongestUnsynced) {
      RETURN_IF_ERROR(ledger_->Flush());
    }
    if (any_ended) {
      size_t kept = 0;
      for (size_t i = 0; i < connections_.size(); ++i) {
        if (ended[i]) continue;
        if (kept != i) connections_[kept] = std::move(connections_[i]);
        ++kept;
      }
      connections_.resize(kept);
    }
    for (auto& connection : added_)
      connections_.push_back(std::move(connection));
    added_.clear();
  }
}

absl::StatusOr<OpenedLedger> OpenLedger(const ServeOptions& options) {
  ASSIGN_OR_RETURN(std::string directory,
                   GarudaSessionFolder(options.home, options.session));
  ASSIGN_OR_RETURN(
      ipc::Channel top,
      ipc::ChannelFromFd(options.channel_fd, AgentChannelOptions(kTopAgent)));
  ASSIGN_OR_RETURN(
      std::unique_ptr<JournaledLedger> ledger,
      JournaledLedger::Open({BudgetJournalFile(directory), options.limit}));
  if (options.log) {
    for (const std::string& note : ledger->start_notes()) options.log(note);
  }
  return OpenedLedger{directory, std::move(top), std::move(ledger)};
}

absl::Status ServeLedger(OpenedLedger opened,
                         std::function<void(const std::string&)> log) {
  BudgetServer server(opened.ledger.get(), std::move(log));
  return server.Serve(std::move(opened.top));
}

absl::StatusOr<std::string> StatusReport(const std::string& home,
                                         const std::string& session,
                                         bool json) {
  ASSIGN_OR_RETURN(std::string directory, GarudaSessionFolder(home, session));
  const std::string path = BudgetJournalFile(directory);
  absl::StatusOr<UniqueFd> opened = OpenRegularFile(path, JournalFileOptions());
  if (absl::IsNotFound(opened.status())) {
    return absl::NotFoundError(absl::StrCat(
        "session ", session, " has no budget journal (", path, ")"));
  }
  if (!opened.ok()) return opened.status();
  UniqueFd fd = *std::move(opened);
  // A budgeter serving the session holds an exclusive lock on its journal.
  const bool serving = ::flock(fd.get(), LOCK_SH | LOCK_NB) != 0;
  ASSIGN_OR_RETURN(std::string text,
                   ReadUpTo(fd.get(), path, kMaxJournalFileBytes));
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
