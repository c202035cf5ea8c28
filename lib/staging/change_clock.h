// When a file changed, as against when a command started: the line
// garuda-stager draws at each staged command's start, so that a path's
// ctime tells a write made during the command (the person's edit, which
// must not become the command's base) from one made before it.
#ifndef GARUDA_LIB_STAGING_CHANGE_CLOCK_H_
#define GARUDA_LIB_STAGING_CHANGE_CLOCK_H_

#include <time.h>

#include <cstdint>

namespace garuda {

// Every write before this call has a ctime earlier than the returned time,
// every write after it one at or after it. Waits for the coarse clock to
// pass the fine one (one clock tick at most, 4 ms here; more on a loaded
// VM whose ticks come late).
struct timespec CommandStartLine();

// The same line without the wait, for a caller that makes sure nothing of
// the command starts before CLOCK_REALTIME_COARSE has passed `*wait_past_ns`
// (the sandbox's PID 1 waits for it, RunOptions::start_after_coarse_ns,
// while the view's mount and the sandbox's setup go on).
struct timespec CommandStartLineUnwaited(int64_t* wait_past_ns);

}  // namespace garuda

#endif  // GARUDA_LIB_STAGING_CHANGE_CLOCK_H_
