#include "tests/sandbox/corpus_places.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "lib/base/errno_status.h"
#include "lib/base/files.h"
#include "lib/base/status_macros.h"

namespace garuda {

std::string Runfile(const std::string& path) {
  return JoinPath(JoinPath(std::getenv("TEST_SRCDIR"), "garuda"), path);
}

absl::StatusOr<CorpusPlaces> MakeCorpusPlaces(const std::string& prefix) {
  std::string templ =
      JoinPath(std::getenv("TEST_TMPDIR"), absl::StrCat(prefix, "XXXXXX"));
  char real[PATH_MAX];
  if (::mkdtemp(templ.data()) == nullptr ||
      ::realpath(templ.c_str(), real) == nullptr) {
    return LastErrnoStatus(templ);
  }
  CorpusPlaces places;
  places.root = real;
  places.project = JoinPath(places.root, "project");
  places.outside = JoinPath(places.root, "outside");
  places.home = JoinPath(places.root, "home");
  for (const std::string& dir :
       {places.project + "/.garuda", places.outside, places.home + "/.garuda",
        JoinPath(places.root, "etc")}) {
    RETURN_IF_ERROR(MakeDirectories(dir, 0755));
  }
  ::setenv("HOME", places.home.c_str(), 1);
  ::setenv("GARUDA_MANAGED_POLICY_DIR", JoinPath(places.root, "etc").c_str(),
           1);
  ::unsetenv("GARUDA_TEST_ONLY_PRETEND_NO_SANDBOX");
  places.stager = Runfile("cmd/garuda-stager/garuda-stager");
  places.helper = JoinPath(places.project, "escape_helper");
  std::error_code error;
  std::filesystem::copy_file(Runfile("tests/sandbox/escape_helper"),
                             places.helper, error);
  if (error) {
    return absl::InternalError(
        absl::StrCat("copy escape_helper: ", error.message()));
  }
  if (::chmod(places.helper.c_str(), 0755) != 0) {
    return LastErrnoStatus(places.helper);
  }
  return places;
}

}  // namespace garuda
