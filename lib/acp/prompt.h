// An ACP prompt (session/prompt's content blocks) as the text of a Garuda
// turn: text as it is, an embedded resource as its URI and text, a link as
// its URI. Images and audio are not offered (initialize says so) and are an
// error naming the block.
#ifndef GARUDA_LIB_ACP_PROMPT_H_
#define GARUDA_LIB_ACP_PROMPT_H_

#include <string>

#include "absl/status/statusor.h"
#include "lib/acp/json_rpc.h"

namespace garuda {
namespace acp {

absl::StatusOr<std::string> PromptText(const Value& params);

}  // namespace acp
}  // namespace garuda

#endif  // GARUDA_LIB_ACP_PROMPT_H_
