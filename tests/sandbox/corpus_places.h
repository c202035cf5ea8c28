// The folders and programs the escape and red-team corpora share: a
// project, a folder outside it, a home and a managed-policy folder of the
// test's own (HOME and GARUDA_MANAGED_POLICY_DIR point there), the real
// garuda-stager, and escape_helper copied into the project so that it is
// visible inside a sandbox.
#ifndef GARUDA_TESTS_SANDBOX_CORPUS_PLACES_H_
#define GARUDA_TESTS_SANDBOX_CORPUS_PLACES_H_

#include <string>

#include "absl/status/statusor.h"

namespace garuda {

struct CorpusPlaces {
  std::string root, project, outside, home, stager, helper;
};

// A runfile of this workspace.
std::string Runfile(const std::string& path);

// Makes them under $TEST_TMPDIR/<prefix>XXXXXX (a real path, without links)
// with project/.garuda and home/.garuda in place.
absl::StatusOr<CorpusPlaces> MakeCorpusPlaces(const std::string& prefix);

}  // namespace garuda

#endif  // GARUDA_TESTS_SANDBOX_CORPUS_PLACES_H_
