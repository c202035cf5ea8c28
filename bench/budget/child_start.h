// The agent's own cost of a child agent (the `task` tool), the model
// excluded: a real session (lib/agent) against the scripted provider server
// on loopback and the real garuda-budgeter. A one-request turn gives the
// cost of a request; a turn with N task calls makes N + 2 requests, and
// what it takes beyond N + 2 requests, divided by N, is the agent's work per
// child: the floor, the lease, the child's own budget channel and model
// connection, its thread, closing the lease and building its result.
#ifndef GARUDA_BENCH_BUDGET_CHILD_START_H_
#define GARUDA_BENCH_BUDGET_CHILD_START_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace garuda {
namespace budget {

struct ChildStartFigures {
  int children = 0;  // 0: the single-agent turn
  int requests = 0;
  double turn_us = 0;       // median turn
  double per_child_us = 0;  // the agent's overhead per child start
};

absl::StatusOr<std::vector<ChildStartFigures>> MeasureChildStarts(
    const std::string& budgeter_path, const std::string& project_root,
    const std::vector<int>& child_counts, int rounds);

}  // namespace budget
}  // namespace garuda

#endif  // GARUDA_BENCH_BUDGET_CHILD_START_H_
