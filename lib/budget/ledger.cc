#include "lib/budget/ledger.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace garuda {
namespace budget {
namespace {

absl::Status CheckTokens(int64_t tokens, const char* what, bool zero_ok) {
  if (tokens < 0 || tokens > kMaxTokens || (tokens == 0 && !zero_ok)) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must be ", zero_ok ? "0" : "1", " to ", kMaxTokens,
                     " tokens, not ", tokens));
  }
  return absl::OkStatus();
}

}  // namespace

Ledger::Ledger(int64_t limit) {
  Agent top;
  top.id = kTopAgent;
  top.parent = kTopAgent;
  top.lease = std::clamp<int64_t>(limit, 0, kMaxTokens);
  agents_.emplace(kTopAgent, std::move(top));
}

absl::Status Ledger::Restart(int64_t limit) {
  if (limit < 0 || limit > kMaxTokens) {
    return absl::InvalidArgumentError(
        absl::StrCat("limit must be 0 to ", kMaxTokens, ", not ", limit));
  }
  if (!open_.empty() || !agents_.at(kTopAgent).open_children.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "a new run needs every reservation settled and every child closed; ",
        open_.size(), " reservations and ",
        agents_.at(kTopAgent).open_children.size(), " children are open"));
  }
  Agent& top = agents_.at(kTopAgent);
  top.lease = limit;
  top.floor = 0;
  return absl::OkStatus();
}

absl::StatusOr<Ledger::Agent*> Ledger::OpenAgent(AgentId agent,
                                                 const char* verb) {
  auto it = agents_.find(agent);
  if (it == agents_.end()) {
    return absl::NotFoundError(
        absl::StrCat(verb, ": there is no agent ", agent));
  }
  if (!it->second.open) {
    return absl::FailedPreconditionError(
        absl::StrCat(verb, ": agent ", agent, " (report ", it->second.report_id,
                     ") is closed; its budget went back to its parent"));
  }
  return &it->second;
}

void Ledger::AddUsed(AgentId id, int64_t delta) {
  while (delta != 0) {
    Agent& agent = agents_.at(id);
    const int64_t before = agent.used;
    agent.used = SaturatingAdd(agent.used, delta);
    if (id == kTopAgent || !agent.open) return;
    // An open child holds its whole lease in its parent, or more if it has
    // passed it (overrun).
    delta = std::max(agent.lease, agent.used) - std::max(agent.lease, before);
    id = agent.parent;
  }
}

bool Ledger::AncestorOverLease(AgentId id) const {
  while (id != kTopAgent) {
    id = agents_.at(id).parent;
    const Agent& agent = agents_.at(id);
    if (agent.used > agent.lease) return true;
  }
  return false;
}

int64_t Ledger::Left(AgentId id) const {
  auto it = agents_.find(id);
  if (it == agents_.end() || !it->second.open) return 0;
  return std::max<int64_t>(0, it->second.lease - it->second.used);
}

bool Ledger::IsOpen(AgentId id) const {
  auto it = agents_.find(id);
  return it != agents_.end() && it->second.open;
}

AgentId Ledger::ParentOf(AgentId id) const { return agents_.at(id).parent; }

const std::string& Ledger::ReportIdOf(AgentId id) const {
  return agents_.at(id).report_id;
}

absl::StatusOr<ReserveResult> Ledger::Reserve(AgentId id, int64_t tokens) {
  Agent* agent;
  {
    auto found = OpenAgent(id, "Reserve");
    if (!found.ok()) return found.status();
    agent = *found;
  }
  absl::Status valid = CheckTokens(tokens, "Reserve: tokens", false);
  if (!valid.ok()) return valid;
  ReserveResult result;
  if (tokens > agent->lease - agent->used || AncestorOverLease(id)) {
    ++agent->refused;
    result.left = Left(id);
    return result;
  }
  ++agent->requests;
  result.granted = true;
  result.reservation = next_reservation_++;
  open_.emplace(result.reservation,
                OpenReservation{result.reservation, id, tokens});
  agent->reserved = SaturatingAdd(agent->reserved, tokens);
  AddUsed(id, tokens);
  result.left = Left(id);
  return result;
}

absl::StatusOr<SettleResult> Ledger::Settle(AgentId id, uint64_t reservation,
                                            int64_t used, bool usage_reported) {
  auto found = OpenAgent(id, "Settle");
  if (!found.ok()) return found.status();
  auto it = open_.find(reservation);
  if (it == open_.end() || it->second.agent != id) {
    return absl::FailedPreconditionError(absl::StrCat(
        "Settle: reservation ", reservation, " is not open for agent ", id));
  }
  if (usage_reported) {
    absl::Status valid = CheckTokens(used, "Settle: used", true);
    if (!valid.ok()) return valid;
  }
  Agent& agent = **found;
  const int64_t tokens = it->second.tokens;
  // Both at most kMaxTokens: the cap is at most 2^51.
  const int64_t cap = tokens + agent.lease;
  const bool capped = usage_reported && used > cap;
  const int64_t charged = !usage_reported ? tokens : capped ? cap : used;
  agent.reserved -= tokens;
  agent.spent = SaturatingAdd(agent.spent, charged);
  if (!usage_reported) {
    agent.unreported = SaturatingAdd(agent.unreported, tokens);
  }
  if (charged > tokens) {
    agent.overrun = SaturatingAdd(agent.overrun, charged - tokens);
  }
  if (capped) {
    ++agent.capped;
    agent.capped_tokens = SaturatingAdd(agent.capped_tokens, used - cap);
  }
  open_.erase(it);
  AddUsed(id, charged - tokens);
  SettleResult result{charged, Left(id)};
  result.capped = capped;
  return result;
}

void Ledger::SettleKept(const OpenReservation& reservation) {
  Agent& agent = agents_.at(reservation.agent);
  agent.reserved -= reservation.tokens;
  agent.spent = SaturatingAdd(agent.spent, reservation.tokens);
  agent.unreported = SaturatingAdd(agent.unreported, reservation.tokens);
  open_.erase(reservation.id);
  // used does not change: the reservation becomes a charge of the same size.
}

absl::StatusOr<OpenChildResult> Ledger::OpenChild(
    AgentId parent_id, int64_t limit, const std::string& report_id) {
  auto found = OpenAgent(parent_id, "OpenChild");
  if (!found.ok()) return found.status();
  absl::Status valid = CheckTokens(limit, "OpenChild: limit", false);
  if (!valid.ok()) return valid;
  Agent& parent = **found;
  OpenChildResult result;
  const int64_t room = parent.lease - parent.used - parent.floor;
  const int64_t lease = std::min(limit, room);
  if (lease <= 0 || AncestorOverLease(parent_id)) {
    ++parent.refused;
    result.left = Left(parent_id);
    return result;
  }
  Agent child;
  child.id = next_agent_++;
  child.parent = parent_id;
  child.report_id = report_id;
  child.lease = lease;
  parent.open_children.push_back(child.id);
  result.granted = true;
  result.child = child.id;
  result.lease = lease;
  agents_.emplace(child.id, std::move(child));
  AddUsed(parent_id, lease);
  result.left = Left(parent_id);
  return result;
}

absl::StatusOr<Ledger::Agent*> Ledger::OpenChildOf(AgentId parent_id,
                                                   AgentId child_id,
                                                   const char* verb) {
  auto child_it = agents_.find(child_id);
  if (child_id == kTopAgent || child_it == agents_.end() ||
      child_it->second.parent != parent_id || !child_it->second.open) {
    return absl::FailedPreconditionError(
        absl::StrCat(verb, ": agent ", child_id,
                     " is not an open child of agent ", parent_id));
  }
  return &child_it->second;
}

absl::StatusOr<ExtendChildResult> Ledger::ExtendChild(AgentId parent_id,
                                                      AgentId child_id,
                                                      int64_t tokens) {
  auto found = OpenAgent(parent_id, "ExtendChild");
  if (!found.ok()) return found.status();
  auto open_child = OpenChildOf(parent_id, child_id, "ExtendChild");
  if (!open_child.ok()) return open_child.status();
  absl::Status valid = CheckTokens(tokens, "ExtendChild: tokens", false);
  if (!valid.ok()) return valid;
  Agent& parent = **found;
  Agent& child = **open_child;
  ExtendChildResult result;
  const int64_t room = parent.lease - parent.used - parent.floor;
  if (tokens > room || AncestorOverLease(parent_id)) {
    result.lease = child.lease;
    result.left = Left(parent_id);
    return result;
  }
  // The parent holds max(lease, used) for an open child.
  const int64_t held = std::max(child.lease, child.used);
  child.lease += tokens;
  AddUsed(parent_id, std::max(child.lease, child.used) - held);
  result.granted = true;
  result.lease = child.lease;
  result.left = Left(parent_id);
  return result;
}

absl::StatusOr<CloseChildResult> Ledger::CloseChild(AgentId parent_id,
                                                    AgentId child_id,
                                                    int64_t reported_tokens) {
  auto found = OpenAgent(parent_id, "CloseChild");
  if (!found.ok()) return found.status();
  auto open_child = OpenChildOf(parent_id, child_id, "CloseChild");
  if (!open_child.ok()) return open_child.status();
  absl::Status valid =
      CheckTokens(reported_tokens, "CloseChild: reported tokens", true);
  if (!valid.ok()) return valid;

  // Whatever the child left open stays charged: the provider may have billed
  // it. Deepest agents first, so each closes with nothing open below it.
  for (const OpenReservation& reservation : OpenReservationsUnder(child_id)) {
    SettleKept(reservation);
  }
  std::vector<AgentId> order = OpenDescendants(child_id);
  order.push_back(child_id);
  CloseChildResult result;
  for (AgentId id : order) {
    Agent& agent = agents_.at(id);
    Agent& parent = agents_.at(agent.parent);
    const int64_t reported = id == child_id ? reported_tokens : 0;
    // A report replaces only the amount it covers: never less than counted.
    const int64_t charge = std::max(reported, agent.used);
    const int64_t held = std::max(agent.lease, agent.used);
    agent.reported = reported;
    agent.close_charge = charge;
    agent.open = false;
    parent.open_children.erase(std::find(parent.open_children.begin(),
                                         parent.open_children.end(), id));
    parent.closed_children = SaturatingAdd(parent.closed_children, charge);
    // The child no longer propagates: carry the parent's change by hand.
    AddUsed(agent.parent, charge - held);
    if (id == child_id) {
      result.charged = charge;
      result.returned = std::max<int64_t>(0, agent.lease - charge);
    }
  }
  result.left = Left(parent_id);
  return result;
}

absl::StatusOr<int64_t> Ledger::SetFloor(AgentId id, int64_t tokens) {
  auto found = OpenAgent(id, "SetFloor");
  if (!found.ok()) return found.status();
  absl::Status valid = CheckTokens(tokens, "SetFloor: tokens", true);
  if (!valid.ok()) return valid;
  (*found)->floor = tokens;
  return Left(id);
}

std::vector<AgentId> Ledger::OpenDescendants(AgentId id) const {
  std::vector<AgentId> order;
  for (AgentId child : agents_.at(id).open_children) {
    std::vector<AgentId> below = OpenDescendants(child);
    order.insert(order.end(), below.begin(), below.end());
    order.push_back(child);
  }
  return order;
}

std::vector<OpenReservation> Ledger::OpenReservationsUnder(AgentId id) const {
  std::vector<AgentId> agents = OpenDescendants(id);
  agents.push_back(id);
  std::vector<OpenReservation> out;
  for (const auto& [reservation_id, reservation] : open_) {
    if (std::find(agents.begin(), agents.end(), reservation.agent) !=
        agents.end()) {
      out.push_back(reservation);
    }
  }
  return out;
}

std::vector<OpenReservation> Ledger::OpenReservations() const {
  std::vector<OpenReservation> out;
  for (const auto& [reservation_id, reservation] : open_) {
    out.push_back(reservation);
  }
  return out;
}

absl::StatusOr<OpenReservation> Ledger::FindReservation(
    uint64_t reservation) const {
  auto it = open_.find(reservation);
  if (it == open_.end()) {
    return absl::NotFoundError(
        absl::StrCat("reservation ", reservation, " is not open"));
  }
  return it->second;
}

int64_t Ledger::SettledPlusOutstanding() const {
  int64_t total = 0;
  for (const auto& [id, agent] : agents_) {
    total = SaturatingAdd(total, SaturatingAdd(agent.spent, agent.reserved));
    // A closing report above what the child was counted for is charged too.
    if (id != kTopAgent && !agent.open) {
      total = SaturatingAdd(total, agent.close_charge - agent.used);
    }
  }
  return total;
}

BudgetStatus Ledger::Status() const {
  BudgetStatus status;
  const Agent& top = agents_.at(kTopAgent);
  status.set_limit(top.lease);
  status.set_floor(top.floor);
  status.set_left(Left(kTopAgent));
  int64_t spent = 0, reserved = 0, leased = 0;
  for (const auto& [id, agent] : agents_) {
    spent = SaturatingAdd(spent, agent.spent);
    reserved = SaturatingAdd(reserved, agent.reserved);
    if (id != kTopAgent && !agent.open) {
      spent = SaturatingAdd(spent, agent.close_charge - agent.used);
    }
    if (id != kTopAgent && agent.open) {
      leased =
          SaturatingAdd(leased, std::max<int64_t>(0, agent.lease - agent.used));
    }
    AgentUsage* row = status.add_agents();
    row->set_agent(id);
    row->set_parent(agent.parent);
    row->set_report_id(agent.report_id);
    row->set_open(agent.open);
    row->set_lease(agent.lease);
    row->set_spent(agent.spent);
    row->set_reserved(agent.reserved);
    row->set_unreported(agent.unreported);
    int64_t children = agent.closed_children;
    for (AgentId child : agent.open_children) {
      const Agent& c = agents_.at(child);
      children = SaturatingAdd(children, std::max(c.lease, c.used));
    }
    row->set_children(children);
    row->set_floor(agent.floor);
    row->set_requests(agent.requests);
    row->set_refused(agent.refused);
    row->set_overrun(agent.overrun);
    row->set_reported(agent.reported);
    row->set_capped(agent.capped);
    row->set_capped_tokens(agent.capped_tokens);
  }
  status.set_spent(spent);
  status.set_reserved(reserved);
  status.set_leased(leased);
  return status;
}

}  // namespace budget
}  // namespace garuda
