// When a file changed, as against when a command started: the line
// garuda-stager draws at each staged command's start, so that a path's
// ctime tells a write made during the command (the person's edit, which
// must not become the command's base) from one made before it.
#ifndef GARUDA_LIB_STAGING_CHANGE_CLOCK_H_
#define GARUDA_LIB_STAGING_CHANGE_CLOCK_H_

#include <time.h>

namespace garuda {

// Every write before this call has a ctime earlier than the returned time,
// every write after it one at or after it. Waits for the coarse clock to
// pass the fine one (one clock tick at most, 4 ms here; more on a loaded
// VM whose ticks come late).
struct timespec CommandStartLine();

}  // namespace garuda

#endif  // GARUDA_LIB_STAGING_CHANGE_CLOCK_H_
