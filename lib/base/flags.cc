#include "lib/base/flags.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <cstdint>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"
#include "absl/flags/usage.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"
#include "lib/base/version.h"

namespace garuda {
namespace {

std::string Dashed(absl::string_view name) {
  return absl::StrReplaceAll(name, {{"_", "-"}});
}

std::string ProgramName(absl::string_view argv0) {
  size_t slash = argv0.rfind('/');
  return std::string(slash == absl::string_view::npos ? argv0
                                                       : argv0.substr(slash + 1));
}

// The flags a person may set: ours, not the ones Abseil registers for itself
// (--flagfile, --fromenv, ...), which we do not read.
bool IsOurs(const absl::CommandLineFlag& flag) {
  return !absl::StrContains(flag.Filename(), "absl/") && !flag.IsRetired();
}

// The flags of the program's own main.cc, or every one of ours when none is
// there (a test binary).
std::vector<const absl::CommandLineFlag*> ProgramFlags() {
  std::vector<const absl::CommandLineFlag*> main_flags, ours;
  for (const auto& [name, flag] : absl::GetAllFlags()) {
    if (!IsOurs(*flag)) continue;
    ours.push_back(flag);
    const std::string file = flag->Filename();
    if (absl::StartsWith(file, "cmd/") && absl::EndsWith(file, "/main.cc")) {
      main_flags.push_back(flag);
    }
  }
  std::vector<const absl::CommandLineFlag*>& flags =
      main_flags.empty() ? ours : main_flags;
  std::sort(flags.begin(), flags.end(),
            [](const absl::CommandLineFlag* a, const absl::CommandLineFlag* b) {
              return a->Name() < b->Name();
            });
  return flags;
}

// Optimal string alignment distance (an edit, or two letters swapped).
size_t EditDistance(absl::string_view a, absl::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1,
                                     std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1,
                          d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

// "--base-url" for "base_ur", when one flag is close enough to be the one
// meant; else "".
std::string Suggestion(absl::string_view name) {
  std::string best;
  size_t best_distance = std::max<size_t>(2, name.size() / 3) + 1;
  for (const absl::CommandLineFlag* flag : ProgramFlags()) {
    size_t distance = EditDistance(name, flag->Name());
    // A prefix of a longer flag ("--output" for "--output-format") counts.
    if (flag->Name().size() > name.size() + 2 && name.size() >= 3 &&
        absl::StartsWith(flag->Name(), name)) {
      distance = 1;
    }
    if (distance < best_distance) {
      best_distance = distance;
      best = absl::StrCat("--", Dashed(flag->Name()));
    }
  }
  return best;
}

std::string Expected(const absl::CommandLineFlag& flag) {
  if (flag.IsOfType<bool>()) return "true or false";
  if (flag.IsOfType<int>() || flag.IsOfType<int64_t>()) return "a whole number";
  if (flag.IsOfType<uint64_t>() || flag.IsOfType<uint32_t>()) {
    return "a whole number, 0 or more";
  }
  if (flag.IsOfType<double>()) return "a number";
  return "a value";
}

}  // namespace

std::string ProgramHelp(absl::string_view program, absl::string_view usage) {
  std::string text = absl::StrCat(program, ": ", usage, "\n\nFlags:\n");
  for (const absl::CommandLineFlag* flag : ProgramFlags()) {
    std::string spelled = absl::StrCat("--", Dashed(flag->Name()));
    if (flag->Name().size() == 1) spelled = absl::StrCat("-", flag->Name());
    std::string default_value = flag->DefaultValue();
    if (flag->IsOfType<std::string>()) {
      default_value = default_value.empty() ? "" : absl::StrCat("\"", default_value, "\"");
    }
    absl::StrAppend(&text, "  ", spelled,
                    default_value.empty() ? "" : absl::StrCat(" (default ", default_value, ")"),
                    "\n      ", flag->Help(), "\n");
  }
  absl::StrAppend(&text,
                  "  -h, --help\n      this text\n"
                  "  --version\n      the version\n");
  return text;
}

absl::StatusOr<std::vector<std::string>> ParseFlags(
    const std::vector<std::string>& args, std::string* exit_text) {
  const std::string program = args.empty() ? "" : ProgramName(args[0]);
  const std::string see_help = absl::StrCat(" (", program, " --help lists the flags)");
  std::vector<std::string> positional;
  if (!args.empty()) positional.push_back(args[0]);
  for (size_t index = 1; index < args.size(); ++index) {
    const std::string& arg = args[index];
    if (arg == "--") {
      positional.insert(positional.end(), args.begin() + index + 1, args.end());
      break;
    }
    if (arg.size() < 2 || arg[0] != '-') {
      positional.push_back(arg);
      continue;
    }
    absl::string_view body = absl::StripPrefix(absl::StripPrefix(arg, "-"), "-");
    const size_t equals = body.find('=');
    std::string name = absl::StrReplaceAll(body.substr(0, equals), {{"-", "_"}});
    const bool has_value = equals != absl::string_view::npos;
    const std::string value(has_value ? body.substr(equals + 1) : "");
    absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
    if (flag != nullptr && !IsOurs(*flag)) flag = nullptr;
    if (flag == nullptr && (name == "help" || name == "h")) {
      *exit_text = ProgramHelp(program, absl::ProgramUsageMessage());
      return std::vector<std::string>();
    }
    if (flag == nullptr && name == "version") {
      *exit_text = absl::StrCat(program, " ", kGarudaVersion, "\n");
      return std::vector<std::string>();
    }
    bool negated = false;
    if (flag == nullptr && absl::StartsWith(name, "no")) {
      absl::CommandLineFlag* positive = absl::FindCommandLineFlag(name.substr(2));
      if (positive != nullptr && IsOurs(*positive) && positive->IsOfType<bool>()) {
        flag = positive;
        negated = true;
      }
    }
    const std::string spelled = absl::StrCat("--", Dashed(body.substr(0, equals)));
    if (flag == nullptr) {
      std::string suggestion = Suggestion(name);
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown flag ", spelled,
          suggestion.empty() ? "" : absl::StrCat("; did you mean ", suggestion, "?"),
          see_help));
    }
    std::string text = value;
    if (negated) {
      if (has_value) {
        return absl::InvalidArgumentError(
            absl::StrCat(spelled, " takes no value", see_help));
      }
      text = "false";
    } else if (!has_value) {
      if (flag->IsOfType<bool>()) {
        text = "true";
      } else if (index + 1 < args.size()) {
        text = args[++index];
      } else {
        return absl::InvalidArgumentError(absl::StrCat(
            spelled, " needs a value (", spelled, "=VALUE or ", spelled,
            " VALUE)", see_help));
      }
    }
    std::string error;
    if (!flag->ParseFrom(text, &error)) {
      return absl::InvalidArgumentError(absl::StrCat(
          spelled, " takes ", Expected(*flag), ", not \"", text, "\"", see_help));
    }
  }
  return positional;
}

void RequireFolderFlag(absl::string_view program, absl::string_view flag,
                       const std::string& value) {
  if (value.empty()) return;
  struct stat st;
  std::string problem;
  if (::stat(value.c_str(), &st) != 0) {
    problem = errno == ENOENT ? "no such folder" : std::strerror(errno);
  } else if (!S_ISDIR(st.st_mode)) {
    problem = "not a folder";
  }
  if (problem.empty()) return;
  std::fprintf(stderr, "%s: --%s %s: %s\n", std::string(program).c_str(),
               Dashed(flag).c_str(), value.c_str(), problem.c_str());
  std::exit(kExitUsageError);
}

std::vector<std::string> ParseProgramFlags(int argc, char** argv,
                                           absl::string_view usage) {
  absl::SetProgramUsageMessage(usage);
  std::vector<std::string> args(argv, argv + argc);
  std::string exit_text;
  absl::StatusOr<std::vector<std::string>> positional = ParseFlags(args, &exit_text);
  if (!positional.ok()) {
    std::fprintf(stderr, "%s: %s\n", ProgramName(args.empty() ? "" : args[0]).c_str(),
                 std::string(positional.status().message()).c_str());
    std::exit(kExitUsageError);
  }
  if (!exit_text.empty()) {
    std::fputs(exit_text.c_str(), stdout);
    std::exit(0);
  }
  return *std::move(positional);
}

}  // namespace garuda
