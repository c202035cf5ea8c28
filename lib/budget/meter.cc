#include "lib/budget/meter.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/base/status_macros.h"

namespace garuda {
namespace budget {

int64_t TokensForChars(int64_t chars) {
  if (chars <= 0) return 0;
  return (chars + kCharsPerToken - 1) / kCharsPerToken;
}

int64_t EstimateRequestTokens(const RequestShape& shape) {
  const int64_t whole =
      TokensForChars(shape.system_prompt_chars + shape.message_chars +
                     shape.tool_definition_chars + shape.other_chars);
  const int64_t measured = shape.last_measured_input_tokens +
                           TokensForChars(shape.new_message_chars);
  return std::max(whole, measured) + std::max<int64_t>(0, shape.output_limit);
}

int64_t EstimateFloorTokens(const FloorShape& shape) {
  const int64_t next = std::max(
      shape.last_reservation, shape.current_input_tokens + shape.output_limit);
  // Each pending result can come back at its cap with every character
  // escaped, wrapped in its message.
  const int64_t per_tool =
      TokensForChars(kToolResultCapChars * kJsonEscapeFactor +
                     shape.empty_result_message_chars);
  const int64_t per_subagent =
      TokensForChars(kSubagentResultCapChars * kJsonEscapeFactor +
                     shape.empty_result_message_chars);
  return next + shape.pending_tool_results * per_tool +
         shape.pending_subagent_results * per_subagent +
         shape.compaction_tokens;
}

int64_t EstimateCompactionTokens(int64_t previous_context_tokens,
                                 int64_t summary_input_chars) {
  return std::max(previous_context_tokens,
                  TokensForChars(summary_input_chars)) +
         kCompactionOutputTokens;
}

std::optional<int64_t> ReportedTokens(const ProviderUsage& usage) {
  if (!usage.input_tokens || !usage.output_tokens) return std::nullopt;
  int64_t total = 0;
  for (const std::optional<int64_t>& part :
       {usage.input_tokens, usage.output_tokens, usage.cache_read_tokens,
        usage.cache_write_tokens}) {
    if (!part) continue;
    if (*part < 0 || *part > kMaxTokens) return std::nullopt;
    total += *part;
  }
  return total;
}

BudgetClient::BudgetClient(ipc::HelperProcess* budgeter) : process_(budgeter) {}

BudgetClient::BudgetClient(ipc::Channel channel)
    : channel_(std::move(channel)) {}

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

int BudgetClient::fd() {
  return process_ != nullptr ? process_->channel().fd() : channel_->fd();
}

absl::StatusOr<BudgetReply> BudgetClient::Call(BudgetRequest& request,
                                               std::vector<UniqueFd>* fds) {
  if (!dead_.ok()) return dead_;
  request.set_seq(++seq_);
  BudgetReply reply;
  absl::Status status;
  if (process_ != nullptr) {
    status = process_->Call(request, &reply, fds);
  } else {
    status = channel_->Send(request);
    if (status.ok()) status = channel_->Receive(&reply, fds);
  }
  if (status.ok() && reply.seq() != request.seq()) {
    status = absl::DataLossError(absl::StrCat(
        "reply seq ", reply.seq(), " to request seq ", request.seq()));
  }
  if (!status.ok()) {
    // Whatever the cause, the ledger can no longer be asked: stop metering
    // for good, so that no model request goes out without a reservation.
    dead_ = absl::UnavailableError(
        absl::StrCat("garuda-budgeter is gone (", status.message(),
                     "): no model request may go out unmetered"));
    return dead_;
  }
  if (reply.has_error()) {
    return absl::Status(
        static_cast<absl::StatusCode>(reply.error().code()),
        absl::StrCat("garuda-budgeter: ", reply.error().message()));
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
  ASSIGN_OR_RETURN(BudgetReply reply, Call(request, nullptr));
  if (!reply.has_reserved()) return WrongReply("Reserve");
  return reply.reserved();
}

absl::StatusOr<Settled> BudgetClient::Settle(uint64_t reservation, int64_t used,
                                             bool usage_reported) {
  BudgetRequest request;
  request.mutable_settle()->set_reservation(reservation);
  request.mutable_settle()->set_used(used);
  request.mutable_settle()->set_usage_reported(usage_reported);
  ASSIGN_OR_RETURN(BudgetReply reply, Call(request, nullptr));
  if (!reply.has_settled()) return WrongReply("Settle");
  return reply.settled();
}

absl::StatusOr<BudgetClient::Child> BudgetClient::OpenChild(
    int64_t limit, const std::string& report_id) {
  BudgetRequest request;
  request.mutable_open_child()->set_limit(limit);
  request.mutable_open_child()->set_report_id(report_id);
  std::vector<UniqueFd> fds;
  ASSIGN_OR_RETURN(BudgetReply reply, Call(request, &fds));
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
  ASSIGN_OR_RETURN(BudgetReply reply, Call(request, nullptr));
  if (!reply.has_child_closed()) return WrongReply("CloseChild");
  return reply.child_closed();
}

absl::StatusOr<FloorSet> BudgetClient::SetFloor(int64_t tokens) {
  BudgetRequest request;
  request.mutable_set_floor()->set_tokens(tokens);
  ASSIGN_OR_RETURN(BudgetReply reply, Call(request, nullptr));
  if (!reply.has_floor_set()) return WrongReply("SetFloor");
  return reply.floor_set();
}

absl::StatusOr<BudgetStatus> BudgetClient::Status() {
  BudgetRequest request;
  request.mutable_status();
  ASSIGN_OR_RETURN(BudgetReply reply, Call(request, nullptr));
  if (!reply.has_status()) return WrongReply("Status");
  return reply.status();
}

MeteredCall::MeteredCall(BudgetClient* client, uint64_t reservation,
                         int64_t tokens, std::string purpose,
                         std::string request_id)
    : client_(client),
      reservation_(reservation),
      tokens_(tokens),
      purpose_(std::move(purpose)),
      request_id_(std::move(request_id)) {}

MeteredCall::MeteredCall(MeteredCall&& other) noexcept
    : client_(other.client_),
      reservation_(std::exchange(other.reservation_, 0)),
      tokens_(other.tokens_),
      purpose_(std::move(other.purpose_)),
      request_id_(std::move(other.request_id_)),
      attempts_(other.attempts_) {}

MeteredCall& MeteredCall::operator=(MeteredCall&& other) noexcept {
  if (this != &other) {
    if (open()) Cancel().IgnoreError();
    client_ = other.client_;
    reservation_ = std::exchange(other.reservation_, 0);
    tokens_ = other.tokens_;
    purpose_ = std::move(other.purpose_);
    request_id_ = std::move(other.request_id_);
    attempts_ = other.attempts_;
  }
  return *this;
}

MeteredCall::~MeteredCall() {
  // Cancelled: the provider may have billed it, so it stays spent. If the
  // budgeter is gone the open reservation is charged at the next resume.
  if (open()) Cancel().IgnoreError();
}

absl::Status MeteredCall::Finish(int64_t used, bool reported) {
  if (!open()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "request ", request_id_, " has no open reservation to settle"));
  }
  const uint64_t reservation = std::exchange(reservation_, 0);
  return client_->Settle(reservation, used, reported).status();
}

absl::Status MeteredCall::Settle(const ProviderUsage& usage) {
  std::optional<int64_t> used = ReportedTokens(usage);
  return Finish(used.value_or(0), used.has_value());
}

absl::Status MeteredCall::SettleUnreported() { return Finish(0, false); }

absl::Status MeteredCall::Retry(const ProviderUsage& usage) {
  RETURN_IF_ERROR(Settle(usage));
  ++attempts_;
  ASSIGN_OR_RETURN(Reserved reserved,
                   client_->Reserve(tokens_, "retry",
                                    absl::StrCat(request_id_, "#", attempts_)));
  if (!reserved.granted()) {
    return absl::ResourceExhaustedError(absl::StrCat(
        kTokenBudget, ": retry ", attempts_, " of ", request_id_, " needs ",
        tokens_, " tokens, ", reserved.left(), " left"));
  }
  reservation_ = reserved.reservation();
  return absl::OkStatus();
}

absl::StatusOr<MeteredCall> Meter::Begin(int64_t tokens,
                                         const std::string& purpose,
                                         const std::string& request_id) {
  ASSIGN_OR_RETURN(Reserved reserved,
                   client_->Reserve(tokens, purpose, request_id));
  if (!reserved.granted()) {
    return absl::ResourceExhaustedError(
        absl::StrCat(kTokenBudget, ": ", purpose, " request ", request_id,
                     " needs ", tokens, " tokens, ", reserved.left(), " left"));
  }
  return MeteredCall(client_, reserved.reservation(), tokens, purpose,
                     request_id);
}

}  // namespace budget
}  // namespace garuda
