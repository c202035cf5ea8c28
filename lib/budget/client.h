// The client of garuda-budgeter's channel, beside its server (server.h):
// one agent's connection to the ledger, and the status as a person reads it.
#ifndef GARUDA_LIB_BUDGET_CLIENT_H_
#define GARUDA_LIB_BUDGET_CLIENT_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/base/unique_fd.h"
#include "lib/ipc/channel.h"
#include "lib/ipc/client.h"
#include "lib/ipc/helper_process.h"
#include "proto/budgeter_service.pb.h"

namespace garuda {
namespace budget {

// ---- The channel ----

// The options of an agent's channel to garuda-budgeter: for
// HelperOptions::channel when the top agent starts it (a child's own channel
// gets them in BudgetClient::FromFd).
ipc::ChannelOptions BudgeterChannelOptions();

// One agent's connection to the budgeter. The top agent talks over the
// helper process it started (its death is seen through the pidfd); a child
// over the channel descriptor its parent passed it.
class BudgetClient {
 public:
  explicit BudgetClient(ipc::HelperProcess* budgeter);
  explicit BudgetClient(ipc::Channel channel);
  // A child agent's side, from the descriptor number it was given.
  static absl::StatusOr<std::unique_ptr<BudgetClient>> FromFd(int fd);

  absl::StatusOr<Reserved> Reserve(int64_t tokens, const std::string& purpose,
                                   const std::string& request_id);
  absl::StatusOr<Settled> Settle(uint64_t reservation, int64_t used,
                                 bool usage_reported);
  struct Child {
    ChildOpened opened;
    UniqueFd channel;  // the child's end: pass it to the child process
  };
  absl::StatusOr<Child> OpenChild(int64_t limit, const std::string& report_id);
  absl::StatusOr<ChildClosed> CloseChild(uint32_t child,
                                         const ChildReport& report);
  absl::StatusOr<ChildExtended> ExtendChild(uint32_t child, int64_t tokens);
  absl::StatusOr<FloorSet> SetFloor(int64_t tokens);
  absl::StatusOr<BudgetStatus> Status();

  // A child's side: asked, when a Reserve is refused, for `missing` more
  // tokens of lease (its parent's ExtendChild); true when they were added,
  // and the Reserve is asked once more. May wait for the parent's other
  // children.
  using Refill = std::function<bool(int64_t missing)>;
  void set_refill(Refill refill) { refill_ = std::move(refill); }

  // OK while the budgeter answers; UNAVAILABLE, for good, once it is gone.
  absl::Status health() const { return dead_; }
  // The socket, for an event loop that wants to see the budgeter hang up.
  int fd();

 private:
  absl::StatusOr<BudgetReply> Call(BudgetRequest request,
                                   std::vector<UniqueFd>* fds);

  ipc::Client<BudgetRequest, BudgetReply> client_;
  absl::Status dead_;
  Refill refill_;
};

// The text form of a status: the totals, then one row per agent.
std::string FormatStatus(const BudgetStatus& status);

}  // namespace budget
}  // namespace garuda

#endif  // GARUDA_LIB_BUDGET_CLIENT_H_
