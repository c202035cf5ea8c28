// QueryResult <-> the code-tools channel's Answer (proto/code_tools_service),
// written once for the server and the client.
#ifndef GARUDA_LIB_KNOWLEDGE_ANSWER_PROTO_H_
#define GARUDA_LIB_KNOWLEDGE_ANSWER_PROTO_H_

#include <cstdint>

#include "lib/knowledge/query.h"
#include "proto/code_tools_service.pb.h"

namespace garuda::knowledge {

// The channel's frame cap, both ways: an answer holds at most 2000 hits
// (the server's cap), each with a line of context cut at 160 bytes.
inline constexpr uint32_t kCodeToolsFrameBytes = 4 << 20;

code_tools::Answer AnswerToProto(const QueryResult& result);
// An unknown provenance name reads as search_based: the weakest claim.
QueryResult AnswerFromProto(const code_tools::Answer& answer);

}  // namespace garuda::knowledge

#endif  // GARUDA_LIB_KNOWLEDGE_ANSWER_PROTO_H_
