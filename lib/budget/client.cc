#include "lib/budget/client.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/base/status_macros.h"
#include "lib/budget/ledger.h"

namespace garuda {
namespace budget {

BudgetClient::BudgetClient(ipc::HelperProcess* budgeter)
    : client_(budgeter, "garuda-budgeter") {}

BudgetClient::BudgetClient(ipc::Channel channel)
    : client_(std::move(channel), "garuda-budgeter") {}

ipc::ChannelOptions BudgeterChannelOptions() {
  ipc::ChannelOptions options;
  options.peer_name = "garuda-budgeter";
  // The budgeter answers each request once, and the client waits for it:
  // one read per answer.
  options.read_ahead = true;
  return options;
}

absl::StatusOr<std::unique_ptr<BudgetClient>> BudgetClient::FromFd(int fd) {
  ipc::ChannelOptions options = BudgeterChannelOptions();
  ASSIGN_OR_RETURN(ipc::Channel channel, ipc::ChannelFromFd(fd, options));
  return std::make_unique<BudgetClient>(std::move(channel));
}

int BudgetClient::fd() { return client_.channel().fd(); }

absl::StatusOr<BudgetReply> BudgetClient::Call(BudgetRequest request,
                                               std::vector<UniqueFd>* fds) {
  if (!dead_.ok()) return dead_;
  absl::StatusOr<BudgetReply> reply = client_.Call(std::move(request), fds);
  if (!client_.transport().ok()) {
    // Whatever the cause, the ledger can no longer be asked: stop metering
    // for good, so that no model request goes out without a reservation.
    // (An Error reply is the budgeter's answer: the channel goes on.)
    dead_ = absl::UnavailableError(
        absl::StrCat("garuda-budgeter is gone (", client_.transport().message(),
                     "): no model request may go out unmetered"));
    return dead_;
  }
  return reply;
}

namespace {

absl::Status WrongReply(const char* verb) {
  return absl::InternalError(
      absl::StrCat("garuda-budgeter answered ", verb, " with another verb"));
}

}  // namespace

absl::StatusOr<Reserved> BudgetClient::Reserve(int64_t tokens,
                                               const std::string& purpose,
                                               const std::string& request_id) {
  BudgetRequest request;
  request.mutable_reserve()->set_tokens(tokens);
  request.mutable_reserve()->set_purpose(purpose);
  request.mutable_reserve()->set_request_id(request_id);
  // Copied only when a refused Reserve may be asked once more.
  ASSIGN_OR_RETURN(
      BudgetReply reply,
      Call(refill_ ? BudgetRequest(request) : std::move(request), nullptr));
  if (!reply.has_reserved()) return WrongReply("Reserve");
  if (!reply.reserved().granted() && refill_ &&
      refill_(tokens - reply.reserved().left())) {
    ASSIGN_OR_RETURN(reply, Call(request, nullptr));
    if (!reply.has_reserved()) return WrongReply("Reserve");
  }
  return reply.reserved();
}

absl::StatusOr<Settled> BudgetClient::Settle(uint64_t reservation, int64_t used,
                                             bool usage_reported) {
  BudgetRequest request;
  request.mutable_settle()->set_reservation(reservation);
  request.mutable_settle()->set_used(used);
  request.mutable_settle()->set_usage_reported(usage_reported);
  ASSIGN_OR_RETURN(BudgetReply reply, Call(std::move(request), nullptr));
  if (!reply.has_settled()) return WrongReply("Settle");
  return reply.settled();
}

absl::StatusOr<BudgetClient::Child> BudgetClient::OpenChild(
    int64_t limit, const std::string& report_id) {
  BudgetRequest request;
  request.mutable_open_child()->set_limit(limit);
  request.mutable_open_child()->set_report_id(report_id);
  std::vector<UniqueFd> fds;
  ASSIGN_OR_RETURN(BudgetReply reply, Call(std::move(request), &fds));
  if (!reply.has_child_opened()) return WrongReply("OpenChild");
  Child child;
  child.opened = reply.child_opened();
  if (child.opened.granted()) {
    if (fds.size() != 1) {
      return absl::InternalError(absl::StrCat(
          "garuda-budgeter granted child ", child.opened.child(), " with ",
          fds.size(), " descriptors instead of its one channel"));
    }
    child.channel = std::move(fds[0]);
  }
  return child;
}

absl::StatusOr<ChildClosed> BudgetClient::CloseChild(
    uint32_t child, const ChildReport& report) {
  BudgetRequest request;
  request.mutable_close_child()->set_child(child);
  *request.mutable_close_child()->mutable_report() = report;
  ASSIGN_OR_RETURN(BudgetReply reply, Call(std::move(request), nullptr));
  if (!reply.has_child_closed()) return WrongReply("CloseChild");
  return reply.child_closed();
}

absl::StatusOr<ChildExtended> BudgetClient::ExtendChild(uint32_t child,
                                                        int64_t tokens) {
  BudgetRequest request;
  request.mutable_extend_child()->set_child(child);
  request.mutable_extend_child()->set_tokens(tokens);
  ASSIGN_OR_RETURN(BudgetReply reply, Call(std::move(request), nullptr));
  if (!reply.has_child_extended()) return WrongReply("ExtendChild");
  return reply.child_extended();
}

absl::StatusOr<FloorSet> BudgetClient::SetFloor(int64_t tokens) {
  BudgetRequest request;
  request.mutable_set_floor()->set_tokens(tokens);
  ASSIGN_OR_RETURN(BudgetReply reply, Call(std::move(request), nullptr));
  if (!reply.has_floor_set()) return WrongReply("SetFloor");
  return reply.floor_set();
}

absl::StatusOr<BudgetStatus> BudgetClient::Status() {
  BudgetRequest request;
  request.mutable_status();
  ASSIGN_OR_RETURN(BudgetReply reply, Call(std::move(request), nullptr));
  if (!reply.has_status()) return WrongReply("Status");
  return reply.status();
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
    if (agent.capped() > 0) {
      absl::StrAppendFormat(&out,
                            "       capped: %d reports above what one request "
                            "can cost, charged at that cap (%d reported "
                            "tokens not charged)\n",
                            agent.capped(), agent.capped_tokens());
    }
  }
  return out;
}

}  // namespace budget
}  // namespace garuda
