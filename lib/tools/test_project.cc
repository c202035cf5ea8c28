#include "lib/tools/test_project.h"

#include "gtest/gtest.h"
#include "lib/changeset/test_tree.h"

namespace garuda::testing {

TestProject MakeTestProject(
    const std::string& label,
    const std::function<void(const std::string&, const std::string&)>& setup) {
  TestProject t;
  t.parent = NewTempDir(label);
  t.root = t.parent + "/project";
  MakeDir(t.root);
  setup(t.parent, t.root);
  absl::StatusOr<std::unique_ptr<Project>> project = Project::Open(t.root);
  EXPECT_TRUE(project.ok()) << project.status();
  if (project.ok()) t.project = std::move(*project);
  return t;
}

}  // namespace garuda::testing
