// A list handed from one helper to another through garuda-agent travels in
// a sealed memfd: once sealed, no process that holds the descriptor (the
// agent included) can change, grow or shrink it, so what the receiver
// checks and shows is what it uses.
#ifndef GARUDA_LIB_IPC_SEALED_MEMFD_H_
#define GARUDA_LIB_IPC_SEALED_MEMFD_H_

#include <functional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lib/base/unique_fd.h"

namespace garuda {
namespace ipc {

// The seals a sealed memfd has: no write, no growth, no shrinking, no
// further seal (so none can be taken away or added).
int SealsOfASealedMemfd();

// A memfd named `name` holding what `fill` wrote to it, sealed, at
// offset 0.
absl::StatusOr<UniqueFd> SealedMemfd(
    const char* name, const std::function<absl::Status(int fd)>& fill);

// OK when `fd` carries every seal of SealsOfASealedMemfd() (F_GET_SEALS);
// else an error naming `what` and the seals it lacks.
absl::Status CheckSealed(int fd, absl::string_view what);

}  // namespace ipc
}  // namespace garuda

#endif  // GARUDA_LIB_IPC_SEALED_MEMFD_H_
