// garuda-budgeter's serving side: one thread polls the top agent's channel
// and every child channel it has handed out, so one process orders every
// reservation of the session (spec T9). Each verb's journal record is
// committed before its reply is sent.
#ifndef GARUDA_LIB_BUDGET_SERVER_H_
#define GARUDA_LIB_BUDGET_SERVER_H_

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/budget/journal.h"
#include "lib/ipc/channel.h"
#include "lib/ipc/dispatcher.h"
#include "proto/budgeter_service.pb.h"

namespace garuda {
namespace budget {

// Caps on what one client can make the budgeter hold.
inline constexpr size_t kMaxChannels = 512;
inline constexpr size_t kMaxLabelBytes =
    256;  // purpose, request and report ids

class BudgetServer {
 public:
  // `log` (optional) gets one line per event a person should see: a child
  // channel ended for a protocol error, a usage charged at the cap.
  explicit BudgetServer(JournaledLedger* ledger,
                        std::function<void(const std::string&)> log = nullptr)
      : ledger_(ledger), log_(std::move(log)) {}

  // Serves until the top agent's channel closes (OK: the session is over),
  // the top agent breaks the protocol (garbage bytes, an oversized length, a
  // frame that does not parse, a wrong seq or verb: an Error reply when the
  // channel still takes one, then that error) or the journal fails (its
  // error: nothing more may be answered). A child channel that breaks the
  // protocol is ended alone, with an error reply.
  //
  // Group commit: every request that is ready in one round is handled
  // (lib/ipc's Dispatcher table, one per channel), then the journal is
  // written with one write, then the replies go out. No reply that raises a
  // charge leaves before its record is written (see journal.h); fdatasync
  // follows once the server is idle (see kIdleBeforeFlush), and at the end
  // of Serve.
  absl::Status Serve(ipc::Channel top);

 private:
  using Dispatcher = ipc::Dispatcher<BudgetRequest, BudgetReply>;
  struct Connection {
    AgentId agent;
    ipc::Channel channel;
    Dispatcher dispatcher;
    // The channel's SO_RCVTIMEO (0: not set yet).
    std::chrono::milliseconds receive_timeout{0};
    // Sets SO_RCVTIMEO to `timeout` unless it is that already.
    absl::Status KeepReceiveTimeout(std::chrono::milliseconds timeout);
  };
  struct Answer {
    Connection* connection;
    Dispatcher::Answer answer;
  };

  std::unique_ptr<Connection> NewConnection(AgentId agent,
                                            ipc::Channel channel);
  absl::Status ServeAll(ipc::Channel top);
  // When the journal's queued and unsynced records are to be flushed: after
  // kIdleBeforeFlush with no request, or kLongestUnsynced at the latest.
  JournaledLedger::Clock::time_point FlushDue() const;
  // poll(2)'s timeout: until the flush is due, or none.
  int PollTimeoutMs() const;
  // With the top agent's channel alone, the server waits in its read:
  // gives that read the timeout after which a pending flush is due.
  absl::Status WaitAlone(Connection& connection);
  // Reads one request from `connection` and handles it, queueing its
  // answer. OK when the channel goes on; OUT_OF_RANGE when the peer closed
  // it; any other error has ended it (a protocol violation).
  absl::Status ReadRequest(Connection& connection,
                           std::vector<Answer>* answers);
  // The verbs, one method each, straight from the channel's Dispatcher
  // table (NewConnection): each applies its request for `agent` to the
  // ledger (its record is queued, not yet written).
  absl::Status OnReserve(AgentId agent, const BudgetRequest& request,
                         BudgetReply* reply);
  absl::Status OnSettle(AgentId agent, const BudgetRequest& request,
                        BudgetReply* reply);
  absl::Status OnOpenChild(AgentId agent, const BudgetRequest& request,
                           BudgetReply* reply,
                           std::vector<UniqueFd>* reply_fds);
  absl::Status OnCloseChild(AgentId agent, const BudgetRequest& request,
                            BudgetReply* reply);
  absl::Status OnExtendChild(AgentId agent, const BudgetRequest& request,
                             BudgetReply* reply);
  absl::Status OnSetFloor(AgentId agent, const BudgetRequest& request,
                          BudgetReply* reply);
  absl::Status OnStatus(AgentId agent, const BudgetRequest& request,
                        BudgetReply* reply);

  JournaledLedger* ledger_;
  std::function<void(const std::string&)> log_;
  JournaledLedger::Clock::time_point last_request_;
  std::vector<std::unique_ptr<Connection>> connections_;
  std::vector<std::unique_ptr<Connection>> added_;
};

struct ServeOptions {
  int channel_fd = -1;
  std::string home;  // $HOME: the journal is under <home>/.garuda/sessions
  std::string session;
  int64_t limit = 0;
  // Where the start notes go (replayed records, crash charges).
  std::function<void(const std::string& line)> log;
};

// What `garuda-budgeter serve` opened: the session folder (the one place it
// writes after its lockdown), the top agent's channel and the journal.
struct OpenedLedger {
  std::string session_folder;
  ipc::Channel top;
  std::unique_ptr<JournaledLedger> ledger;
};

// garuda-budgeter serve, before its lockdown: the channel on
// options.channel_fd and the session's journal, opened or resumed.
absl::StatusOr<OpenedLedger> OpenLedger(const ServeOptions& options);

// After the lockdown: serves the channel (and every child channel it
// opens) until the top agent closes it.
absl::Status ServeLedger(OpenedLedger opened,
                         std::function<void(const std::string&)> log);

// garuda-budgeter status: the session's journal read without changing it, as
// text for a person or as one JSON object (BudgetStatus).
absl::StatusOr<std::string> StatusReport(const std::string& home,
                                         const std::string& session, bool json);

}  // namespace budget
}  // namespace garuda

#endif  // GARUDA_LIB_BUDGET_SERVER_H_
