// What a session asks of its helper programs, as interfaces. Each lives
// beside its channel's server, with the client that implements it over the
// channel (lib/audit/client.h, lib/staging/client.h, lib/apply/client.h);
// tests may put in their own.
#ifndef GARUDA_LIB_AGENT_SERVICES_H_
#define GARUDA_LIB_AGENT_SERVICES_H_

#include "lib/apply/client.h"
#include "lib/audit/client.h"
#include "lib/staging/client.h"

namespace garuda {
namespace agent {

using garuda::ApplyService;
using garuda::AuditSink;
using garuda::CommandService;
using garuda::ProposedChange;

}  // namespace agent
}  // namespace garuda

#endif  // GARUDA_LIB_AGENT_SERVICES_H_
