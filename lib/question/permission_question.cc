#include "lib/question/permission_question.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "lib/base/files.h"
#include "lib/base/visible.h"
#include "lib/question/answer_reader.h"
#include "lib/question/keys.h"

namespace garuda {

PermissionAnswer AskPermission(const PermissionQuestion& question, int in,
                               int out, bool color) {
  auto style = [color](absl::string_view code) {
    return color ? absl::StrCat("\x1b[", code, "m") : std::string();
  };
  std::string text = absl::StrCat(
      "\n", style("1"), "Permission needed (", MakeTextVisible(question.tool),
      "): ", MakeTextVisible(question.summary), style("0"), "\n");
  if (!question.detail.empty()) {
    absl::StrAppend(&text, MakeTextVisible(question.detail));
    if (question.detail.back() != '\n') text += "\n";
  }
  absl::StrAppend(&text, "  y  yes\n");
  if (question.session_rule) {
    absl::StrAppend(&text, "  s  yes, and don't ask again this session for ",
                    MakeTextVisible(*question.session_rule), "\n");
  }
  absl::StrAppend(&text, "  n  no\n");
  (void)WriteAll(out, text);
  const std::string prompt =
      absl::StrCat("Allow? ",
                   question.session_rule ? KeyPrompt({'y', 's', 'n'})
                                         : KeyPrompt({'y', 'n'}),
                   ": ");
  question_internal::AnswerReader reader(in);
  PermissionAnswer answer = PermissionAnswer::kNo;
  for (int tries = 0; tries < 20 && reader.ok(); ++tries) {
    reader.DropTypeAhead();
    (void)WriteAll(out, prompt);
    std::optional<char> key = question.session_rule
                                  ? reader.ReadAnswer({'y', 's', 'n'})
                                  : reader.ReadAnswer({'y', 'n'});
    if (!key) {
      (void)WriteAll(out, "\n");
      break;
    }
    if (reader.raw() && *key != 0) (void)WriteAll(out, std::string(1, *key));
    if (reader.raw()) (void)WriteAll(out, "\n");
    if (*key == 'y') {
      answer = PermissionAnswer::kYes;
      break;
    }
    if (*key == 's') {
      answer = PermissionAnswer::kYesForSession;
      break;
    }
    if (*key == 'n') break;
  }
  (void)WriteAll(
      out, answer == PermissionAnswer::kNo ? "Not allowed.\n" : "Allowed.\n");
  return answer;
}

}  // namespace garuda
