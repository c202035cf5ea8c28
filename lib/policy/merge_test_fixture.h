// The four sources of a merge test, with the paths a person would read in
// the messages; shared by merge_test.cc and network_merge_test.cc.
#ifndef GARUDA_LIB_POLICY_MERGE_TEST_FIXTURE_H_
#define GARUDA_LIB_POLICY_MERGE_TEST_FIXTURE_H_

#include <string>

#include "gtest/gtest.h"
#include "lib/base/json_message.h"
#include "lib/policy/merge.h"

namespace garuda {

inline Settings Parse(const std::string& json) {
  Settings settings;
  absl::Status status = ParseJsonMessage(json, "test", &settings);
  EXPECT_TRUE(status.ok()) << status;
  return settings;
}

class MergeTest : public ::testing::Test {
 protected:
  MergeTest() {
    sources_.managed_policy_path = "/etc/garuda/policy.json";
    sources_.user_policy_path = "/home/u/.garuda/policy.json";
    sources_.user_settings_path = "/home/u/.garuda/settings.json";
    sources_.project_settings_path = "/p/.garuda/settings.json";
  }
  MergedSettings Merge() {
    auto merged = MergeSettings(sources_);
    EXPECT_TRUE(merged.ok()) << merged.status();
    return merged.ok() ? *merged : MergedSettings();
  }
  SettingsSources sources_;
};

}  // namespace garuda

#endif  // GARUDA_LIB_POLICY_MERGE_TEST_FIXTURE_H_
