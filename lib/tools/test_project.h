// Test helper: a project folder in a fresh temp folder, opened as a Project.
#ifndef GARUDA_LIB_TOOLS_TEST_PROJECT_H_
#define GARUDA_LIB_TOOLS_TEST_PROJECT_H_

#include <functional>
#include <memory>
#include <string>

#include "lib/tools/project.h"

namespace garuda::testing {

// `parent` holds `root` ("<parent>/project") and whatever a test puts
// beside it (a secret the tools must not reach).
struct TestProject {
  std::string parent, root;
  std::unique_ptr<Project> project;
};

// `setup(parent, root)` writes the files before the project is opened (a
// git repository must exist before, for the ignore rules).
TestProject MakeTestProject(
    const std::string& label,
    const std::function<void(const std::string& parent,
                             const std::string& root)>& setup);

}  // namespace garuda::testing

#endif  // GARUDA_LIB_TOOLS_TEST_PROJECT_H_
