// The folders and programs the escape and red-team corpora share: a
// project, a folder outside it, a home and a managed-policy folder of the
// test's own (HOME and GARUDA_MANAGED_POLICY_DIR point there), the real
// garuda-stager, and escape_helper copied into the project so that it is
// visible inside a sandbox.
#ifndef GARUDA_TESTS_SANDBOX_CORPUS_PLACES_H_
#define GARUDA_TESTS_SANDBOX_CORPUS_PLACES_H_

#include <string>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"

namespace garuda {

struct CorpusPlaces {
  std::string root, project, outside, home, stager, helper;
};

// A runfile of this workspace.
std::string Runfile(const std::string& path);

// Makes them under $TEST_TMPDIR/<prefix>XXXXXX (a real path, without links)
// with project/.garuda and home/.garuda in place.
absl::StatusOr<CorpusPlaces> MakeCorpusPlaces(const std::string& prefix);

// A fixture base holding the places, made by SetUpPlaces in SetUp.
class CorpusTest : public ::testing::Test {
 protected:
  void SetUpPlaces(const std::string& prefix) {
    absl::StatusOr<CorpusPlaces> places = MakeCorpusPlaces(prefix);
    ASSERT_TRUE(places.ok()) << places.status();
    root_ = places->root;
    project_ = places->project;
    outside_ = places->outside;
    home_ = places->home;
    stager_ = places->stager;
    helper_ = places->helper;
  }
  std::string root_, project_, outside_, home_, stager_, helper_;
};

}  // namespace garuda

#endif  // GARUDA_TESTS_SANDBOX_CORPUS_PLACES_H_
