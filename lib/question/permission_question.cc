#include "lib/question/permission_question.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "lib/base/files.h"
#include "lib/base/visible.h"
#include "lib/question/answer_reader.h"

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
    absl::StrAppend(&text, "  a  yes, and don't ask again this session for ",
                    MakeTextVisible(*question.session_rule), "\n");
  }
  absl::StrAppend(&text, "  n  no\n");
  (void)WriteAll(out, text);
  const std::string choices = question.session_rule ? "[y/a/n]" : "[y/n]";
  question_internal::AnswerReader reader;
  PermissionAnswer answer = PermissionAnswer::kNo;
  for (int tries = 0; tries < 20 && reader.ok(); ++tries) {
    (void)WriteAll(out, absl::StrCat("Allow? ", choices, " "));
    std::string line;
    if (!reader.ReadLine(in, &line)) {
      (void)WriteAll(out, "\n");
      break;
    }
    std::string word = absl::AsciiStrToLower(absl::StripAsciiWhitespace(line));
    if (word == "y" || word == "yes") {
      answer = PermissionAnswer::kYes;
      break;
    }
    if (question.session_rule && (word == "a" || word == "always")) {
      answer = PermissionAnswer::kYesForSession;
      break;
    }
    if (word == "n" || word == "no") break;
  }
  (void)WriteAll(
      out, answer == PermissionAnswer::kNo ? "Not allowed.\n" : "Allowed.\n");
  return answer;
}

}  // namespace garuda
