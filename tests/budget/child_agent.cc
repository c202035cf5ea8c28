// A stand-in for a child agent in the multi-process tests: it meters model
// "requests" over the budget channel its parent passed on --budget-fd, in one
// of a few scripted ways, and prints what it was granted and charged.
//
//   child_agent --budget-fd=3 --mode=spend --chunk=300
//     spend:      reserve chunk after chunk, each settled with a full usage
//                 report, until refused (token_budget)
//     early:      one reservation of chunk, settled to --used, then stop
//     fail:       one reservation, the request fails with no usage
//     fail_usage: one reservation, the request fails having reported --used
//     hold:       one reservation, print "ready", then wait (to be killed)
//     wait:       reserve and settle once, print "ready", wait for a line on
//                 stdin, then try another reservation
// Output: "granted G charged C refused R" on stdout. Exit 0; 3 when the
// budgeter is gone (no request may go out); 1 on any other error.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/strip.h"
#include "lib/budget/meter.h"

namespace {

using garuda::budget::BudgetClient;
using garuda::budget::Meter;
using garuda::budget::ProviderUsage;

ProviderUsage Usage(int64_t tokens) {
  ProviderUsage usage;
  usage.input_tokens = tokens;
  usage.output_tokens = 0;
  return usage;
}

int Report(int64_t granted, int64_t charged, int64_t refused, int code) {
  std::printf("granted %lld charged %lld refused %lld\n",
              static_cast<long long>(granted), static_cast<long long>(charged),
              static_cast<long long>(refused));
  std::fflush(stdout);
  return code;
}

int Failed(const absl::Status& status, int64_t granted, int64_t charged) {
  std::fprintf(stderr, "child_agent: %s\n",
               std::string(status.message()).c_str());
  return Report(granted, charged, 0, absl::IsUnavailable(status) ? 3 : 1);
}

}  // namespace

int main(int argc, char** argv) {
  int fd = -1;
  std::string mode = "spend";
  int64_t chunk = 100, used = 0;
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (absl::ConsumePrefix(&arg, "--budget-fd=")) {
      if (!absl::SimpleAtoi(arg, &fd)) return 2;
    } else if (absl::ConsumePrefix(&arg, "--mode=")) {
      mode = std::string(arg);
    } else if (absl::ConsumePrefix(&arg, "--chunk=")) {
      if (!absl::SimpleAtoi(arg, &chunk)) return 2;
    } else if (absl::ConsumePrefix(&arg, "--used=")) {
      if (!absl::SimpleAtoi(arg, &used)) return 2;
    } else {
      std::fprintf(stderr, "child_agent: unknown argument %s\n", argv[i]);
      return 2;
    }
  }
  auto client = BudgetClient::FromFd(fd);
  if (!client.ok()) return Failed(client.status(), 0, 0);
  Meter meter(client->get());
  int64_t granted = 0, charged = 0, refused = 0;

  if (mode == "spend") {
    while (true) {
      auto call = meter.Begin(chunk, "turn", "spend");
      if (absl::IsResourceExhausted(call.status())) {
        ++refused;
        break;
      }
      if (!call.ok()) return Failed(call.status(), granted, charged);
      granted += chunk;
      absl::Status settled = call->Settle(Usage(chunk));
      if (!settled.ok()) return Failed(settled, granted, charged);
      charged += chunk;
    }
    return Report(granted, charged, refused, 0);
  }

  auto call = meter.Begin(chunk, "turn", mode);
  if (absl::IsResourceExhausted(call.status())) return Report(0, 0, 1, 0);
  if (!call.ok()) return Failed(call.status(), 0, 0);
  granted = chunk;
  absl::Status settled;
  if (mode == "early" || mode == "fail_usage") {
    settled = call->Settle(Usage(used));
    charged = used;
  } else if (mode == "fail") {
    settled = call->SettleUnreported();
    charged = chunk;
  } else if (mode == "hold") {
    std::printf("ready\n");
    std::fflush(stdout);
    char byte;
    while (::read(0, &byte, 1) != 0) {
    }
    return Report(granted, 0, 0, 0);
  } else if (mode == "wait") {
    settled = call->Settle(Usage(chunk));
    charged = chunk;
    if (!settled.ok()) return Failed(settled, granted, charged);
    std::printf("ready\n");
    std::fflush(stdout);
    char byte = 0;
    while (::read(0, &byte, 1) == 1 && byte != '\n') {
    }
    auto next = meter.Begin(chunk, "turn", "after");
    if (!next.ok()) return Failed(next.status(), granted, charged);
    granted += chunk;
    return Report(granted, charged, 0, 0);
  } else {
    std::fprintf(stderr, "child_agent: unknown mode %s\n", mode.c_str());
    return 2;
  }
  if (!settled.ok()) return Failed(settled, granted, charged);
  return Report(granted, charged, refused, 0);
}
