// Helpers of the lib/staging watch tests (tree_watch_test, copy_watch_test).
#ifndef GARUDA_LIB_STAGING_WATCH_TEST_UTIL_H_
#define GARUDA_LIB_STAGING_WATCH_TEST_UTIL_H_

#include <sys/types.h>

#include <string>

namespace garuda::testing {

// Runs `command` with /bin/sh in `dir` (a real process); a test failure
// when it does not exit 0.
void Shell(const std::string& dir, const std::string& command);

// In a forked child (one thread): enters a user namespace of its own, as
// `uid`/`gid` mapped to 0, and lowers its inotify watch limit
// (/proc/sys/user/max_inotify_watches) to `watches`. False on failure.
bool EnterUserNamespaceWithWatchLimit(uid_t uid, gid_t gid, int watches);

}  // namespace garuda::testing

#endif  // GARUDA_LIB_STAGING_WATCH_TEST_UTIL_H_
