// Our own two status macros: Debian 12's Abseil (20220623) ships none.
#ifndef GARUDA_LIB_BASE_STATUS_MACROS_H_
#define GARUDA_LIB_BASE_STATUS_MACROS_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define GARUDA_MACRO_CONCAT_INNER(x, y) x##y
#define GARUDA_MACRO_CONCAT(x, y) GARUDA_MACRO_CONCAT_INNER(x, y)

// Returns the status of `expr` from the enclosing function when it is not OK.
#define RETURN_IF_ERROR(expr)                                   \
  do {                                                          \
    ::absl::Status garuda_status_ = (expr);                     \
    if (!garuda_status_.ok()) return garuda_status_;            \
  } while (false)

// ASSIGN_OR_RETURN(lhs, expr): evaluates `expr` (an absl::StatusOr<T>); on
// error returns its status, otherwise moves the value into `lhs`, which may
// be a declaration (`auto fd`).
#define ASSIGN_OR_RETURN(lhs, expr)                                       \
  GARUDA_ASSIGN_OR_RETURN_IMPL(                                           \
      GARUDA_MACRO_CONCAT(garuda_statusor_, __LINE__), lhs, expr)

#define GARUDA_ASSIGN_OR_RETURN_IMPL(statusor, lhs, expr) \
  auto statusor = (expr);                                 \
  if (!statusor.ok()) return std::move(statusor).status(); \
  lhs = std::move(statusor).value()

#endif  // GARUDA_LIB_BASE_STATUS_MACROS_H_
