// The token ledger of one session: the single ordering authority for every
// reservation of an agent and of all its children (spec T9).
//
// Each agent has a lease: the top agent's is the session limit, a child's is
// carved out of its parent when it opens. An agent's "used" is what it holds
// against its lease:
//
//   used = spent + reserved + charges of closed children
//          + sum over open children of max(lease, child's used)
//
// and it can reserve only what is left, lease - used. A child's lease counts in
// full against its parent while it is open, so parallel children can never
// take the same tokens, and settled plus outstanding never passes the limit
// (except by the amount a provider reports above a reservation: the estimate
// was too low; that is counted as `overrun` and stops further grants).
//
// The ledger is pure state, no I/O: the journal (journal.h) records each
// operation and replays it through the same calls.
#ifndef GARUDA_LIB_BUDGET_LEDGER_H_
#define GARUDA_LIB_BUDGET_LEDGER_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/budget/limits.h"
#include "proto/budgeter_service.pb.h"

namespace garuda {
namespace budget {

using AgentId = uint32_t;
inline constexpr AgentId kTopAgent = 0;

struct ReserveResult {
  bool granted = false;
  uint64_t reservation = 0;  // 0 when refused
  int64_t left = 0;          // what the agent can still reserve
};

struct SettleResult {
  int64_t charged = 0;
  int64_t left = 0;
  // The usage reported was more than the cap of a charge (the reservation
  // plus the agent's whole lease) and was charged at the cap: a provider
  // cannot bill that much for one request, so the report is wrong; the
  // agent is past its lease and gets nothing more either way.
  bool capped = false;
};

struct OpenChildResult {
  bool granted = false;
  AgentId child = 0;
  int64_t lease = 0;
  int64_t left = 0;  // the parent's, after the lease
};

struct ExtendChildResult {
  bool granted = false;
  int64_t lease = 0;  // the child's
  int64_t left = 0;   // the parent's
};

struct CloseChildResult {
  int64_t charged = 0;
  int64_t returned = 0;
  int64_t left = 0;
};

// An open reservation.
struct OpenReservation {
  uint64_t id = 0;
  AgentId agent = 0;
  int64_t tokens = 0;
};

class Ledger {
 public:
  // `limit` must be in [0, kMaxTokens].
  explicit Ledger(int64_t limit);

  // The session limit, changed on a resume with a different --limit. Needs no
  // open reservation or child: a new run starts from settled state.
  absl::Status Restart(int64_t limit);

  // Grants `tokens` to `agent` when they fit in what it has left (and no
  // ancestor has passed its own lease), else refuses with what is left.
  absl::StatusOr<ReserveResult> Reserve(AgentId agent, int64_t tokens);

  // Ends `agent`'s open `reservation`. With `usage_reported` the charge is
  // `used`, at most the reservation plus the agent's lease (then
  // SettleResult::capped); without, the whole reservation stays charged.
  absl::StatusOr<SettleResult> Settle(AgentId agent, uint64_t reservation,
                                      int64_t used, bool usage_reported);

  // A lease of min(limit, left - floor) for a new child of `parent` (left
  // already excludes the parent's open child leases). Refused when that is 0.
  absl::StatusOr<OpenChildResult> OpenChild(AgentId parent, int64_t limit,
                                            const std::string& report_id);

  // Adds `tokens` to the lease of `parent`'s open `child` when they fit in
  // what the parent has above its floor; else nothing (all or none).
  absl::StatusOr<ExtendChildResult> ExtendChild(AgentId parent, AgentId child,
                                                int64_t tokens);

  // Closes `parent`'s open `child`: its open children close first (with no
  // report), its open reservations stay charged in full, and it is charged
  // max(report, what it used); the rest of its lease returns to the parent.
  absl::StatusOr<CloseChildResult> CloseChild(AgentId parent, AgentId child,
                                              int64_t reported_tokens);

  // `agent`'s reserve for its final answer; returns what it has left.
  absl::StatusOr<int64_t> SetFloor(AgentId agent, int64_t tokens);

  // What `agent` can still reserve (0 for an unknown or closed agent).
  int64_t Left(AgentId agent) const;
  bool IsOpen(AgentId agent) const;
  // The parent of a known agent.
  AgentId ParentOf(AgentId agent) const;
  const std::string& ReportIdOf(AgentId agent) const;

  // The open reservations held by `agent` and by its open descendants, in
  // reservation order.
  std::vector<OpenReservation> OpenReservationsUnder(AgentId agent) const;
  // The open descendants of `agent`, deepest first (the order to close them).
  std::vector<AgentId> OpenDescendants(AgentId agent) const;
  // Open reservations of the whole session.
  std::vector<OpenReservation> OpenReservations() const;
  // The owner of an open reservation, NOT_FOUND otherwise.
  absl::StatusOr<OpenReservation> FindReservation(uint64_t reservation) const;

  // The id the next grant will get; the next child's id.
  uint64_t next_reservation() const { return next_reservation_; }
  AgentId next_agent() const { return next_agent_; }
  int64_t limit() const { return agents_.at(kTopAgent).lease; }

  // Limit, spent, reserved, leased, left, and a row per agent.
  BudgetStatus Status() const;

  // Settled plus outstanding of the whole session, summed from every agent's
  // own counts (independent of the cached `used` sums). Never above limit()
  // unless a report passed a reservation (overrun) or a closing report
  // claimed more than the child's lease.
  int64_t SettledPlusOutstanding() const;

 private:
  struct Agent {
    AgentId id = 0;
    AgentId parent = 0;
    std::string report_id;
    bool open = true;
    int64_t lease = 0;
    int64_t used = 0;  // see the top of this file
    int64_t spent = 0;
    int64_t reserved = 0;
    int64_t unreported = 0;
    int64_t overrun = 0;
    int64_t capped = 0;           // settles charged at the cap
    int64_t capped_tokens = 0;    // reported above those caps, not charged
    int64_t closed_children = 0;  // charges of closed children
    int64_t floor = 0;
    int64_t requests = 0;
    int64_t refused = 0;
    int64_t reported = 0;      // closing report
    int64_t close_charge = 0;  // charged to the parent at close
    std::vector<AgentId> open_children;
  };

  absl::StatusOr<Agent*> OpenAgent(AgentId agent, const char* verb);
  // `child`, when it is an open child of `parent`; else the error names
  // `verb`.
  absl::StatusOr<Agent*> OpenChildOf(AgentId parent, AgentId child,
                                     const char* verb);
  // Adds `delta` to agent's used and carries the change up the tree.
  void AddUsed(AgentId agent, int64_t delta);
  bool AncestorOverLease(AgentId agent) const;
  void SettleKept(const OpenReservation& reservation);

  std::map<AgentId, Agent> agents_;
  std::map<uint64_t, OpenReservation> open_;
  uint64_t next_reservation_ = 1;
  AgentId next_agent_ = 1;
};

}  // namespace budget
}  // namespace garuda

#endif  // GARUDA_LIB_BUDGET_LEDGER_H_
