#include "lib/base/status_macros.h"

#include <memory>

#include "gtest/gtest.h"

namespace garuda {
namespace {

absl::Status FailIf(bool fail) {
  if (fail) return absl::InternalError("failed");
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<int>> MakeInt(bool fail) {
  if (fail) return absl::NotFoundError("no int");
  return std::make_unique<int>(7);
}

absl::Status UsesReturnIfError(bool fail, int* reached) {
  RETURN_IF_ERROR(FailIf(fail));
  *reached = 1;
  return absl::OkStatus();
}

absl::StatusOr<int> UsesAssignOrReturn(bool fail) {
  ASSIGN_OR_RETURN(std::unique_ptr<int> value, MakeInt(fail));
  ASSIGN_OR_RETURN(auto second, MakeInt(false));
  return *value + *second;
}

TEST(StatusMacrosTest, ReturnIfErrorReturnsTheError) {
  int reached = 0;
  EXPECT_EQ(UsesReturnIfError(true, &reached).code(),
            absl::StatusCode::kInternal);
  EXPECT_EQ(reached, 0);
  EXPECT_TRUE(UsesReturnIfError(false, &reached).ok());
  EXPECT_EQ(reached, 1);
}

TEST(StatusMacrosTest, AssignOrReturnMovesTheValue) {
  EXPECT_EQ(UsesAssignOrReturn(true).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(*UsesAssignOrReturn(false), 14);
}

}  // namespace
}  // namespace garuda
