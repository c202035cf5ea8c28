// How query results reach their readers: the model (plain text that starts
// with a warning line when the result is approximate), the chat (≈ on every
// result that is not precise, search_based results listed last) and scripts
// (JSON).
#ifndef GARUDA_LIB_KNOWLEDGE_RENDER_H_
#define GARUDA_LIB_KNOWLEDGE_RENDER_H_

#include <string>

#include "absl/strings/string_view.h"
#include "lib/knowledge/query.h"

namespace garuda::knowledge {

// The first line of an approximate result's model text.
extern const char kApproximateWarning[];

std::string ModelText(const QueryResult& result);
std::string ChatText(const QueryResult& result);

// The whole envelope as one JSON object (no newline).
std::string ResultJson(const QueryResult& result);
// The batch form: {"id":<id_json>,"approximate":...,"results":[{"path",
// "line","column","provenance"}]}; `id_json` is already JSON.
std::string BatchLineJson(absl::string_view id_json, const QueryResult& result);

std::string JsonString(absl::string_view text);

}  // namespace garuda::knowledge

#endif  // GARUDA_LIB_KNOWLEDGE_RENDER_H_
