#include "lib/staging/change_clock.h"

#include <cstdint>

#include "lib/staging/copy_snapshot.h"

namespace garuda {

// Taking the coarse clock as the line (as it was) is not enough: a file's
// ctime is the coarse clock's only until someone looks at the file; after a
// stat, Linux (6.13 and later, "multigrain" timestamps on ext4, xfs, btrfs,
// tmpfs) gives its next change a fine-grained ctime, which runs ahead of the
// coarse clock by up to a tick (4 ms; 13 ms measured on a loaded VM). A
// write the person (or a test) made just before the command then looked
// like one made during it, and the command's change to that path, or to any
// new path in that folder, became a conflict (staged_test's "folders" and
// "tar x" cases, one run in five under load). So the line is the fine clock
// now, and the command starts only once the coarse clock has passed it:
// from then on a change, coarse or fine, is stamped past the line.
struct timespec CommandStartLine() {
  int64_t line = 0;
  struct timespec start = CommandStartLineUnwaited(&line);
  WaitForClockPast(line);
  return start;
}

struct timespec CommandStartLineUnwaited(int64_t* wait_past_ns) {
  struct timespec now;
  ::clock_gettime(CLOCK_REALTIME, &now);
  const int64_t line = TimespecNanoseconds(now);
  *wait_past_ns = line;
  const int64_t after = line + 1;
  return {static_cast<time_t>(after / 1000000000),
          static_cast<long>(after % 1000000000)};
}

}  // namespace garuda
