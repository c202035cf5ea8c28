// The echo service of lib/ipc/ipc_test.proto, for the lib/ipc tests: served
// in-process by dispatcher_test and by the echo_helper program.
// States: new -> (open) -> open -> (close) -> closed.
#ifndef GARUDA_LIB_IPC_TESTING_ECHO_SERVICE_H_
#define GARUDA_LIB_IPC_TESTING_ECHO_SERVICE_H_

#include <memory>

#include "lib/ipc/dispatcher.h"
#include "lib/ipc/ipc_test.pb.h"

namespace garuda {
namespace ipc {

using EchoDispatcher = Dispatcher<ipc_test::EchoRequest, ipc_test::EchoReply>;

enum EchoState { kEchoNew = 0, kEchoOpen = 1, kEchoClosed = 2 };

// The dispatcher with every verb but crash, exit and hang, which only the
// helper program registers (they end or stop the process).
std::unique_ptr<EchoDispatcher> MakeEchoDispatcher();

// Adds crash, exit and hang (for the echo_helper program).
void AddProcessVerbs(EchoDispatcher& dispatcher);

}  // namespace ipc
}  // namespace garuda

#endif  // GARUDA_LIB_IPC_TESTING_ECHO_SERVICE_H_
