#include "lib/acp/prompt.h"

#include "absl/strings/str_cat.h"

namespace garuda {
namespace acp {

absl::StatusOr<std::string> PromptText(const Value& params) {
  const Value* prompt = Field(params, "prompt");
  if (prompt == nullptr || prompt->kind_case() != Value::kListValue) {
    return absl::InvalidArgumentError(
        "session/prompt: \"prompt\" must be a list of content blocks");
  }
  std::string text;
  int index = 0;
  for (const Value& block : prompt->list_value().values()) {
    const std::string where =
        absl::StrCat("session/prompt: prompt[", index++, "]");
    std::optional<std::string> type = StringField(block, "type");
    if (!type) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, " has no \"type\""));
    }
    if (*type == "text") {
      absl::StrAppend(&text, StringField(block, "text").value_or(""));
    } else if (*type == "resource") {
      const Value* resource = Field(block, "resource");
      std::optional<std::string> uri =
          resource ? StringField(*resource, "uri") : std::nullopt;
      std::optional<std::string> body =
          resource ? StringField(*resource, "text") : std::nullopt;
      if (!uri || !body) {
        return absl::InvalidArgumentError(
            absl::StrCat(where,
                         ": an embedded resource needs resource.uri and "
                         "resource.text (binary resources are not taken)"));
      }
      absl::StrAppend(&text, "\n\n<resource uri=\"", *uri, "\">\n", *body,
                      body->empty() || body->back() == '\n' ? "" : "\n",
                      "</resource>\n");
    } else if (*type == "resource_link") {
      absl::StrAppend(&text, " ", StringField(block, "uri").value_or(""));
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          where, " is \"", *type,
          "\": Garuda takes text, embedded resources and resource links "
          "(see promptCapabilities)"));
    }
  }
  if (text.empty()) {
    return absl::InvalidArgumentError("session/prompt: the prompt is empty");
  }
  return text;
}

}  // namespace acp
}  // namespace garuda
