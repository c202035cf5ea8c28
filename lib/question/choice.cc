#include "lib/question/choice.h"

#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/base/visible.h"

namespace garuda {
namespace {

bool Beneath(const std::string& path, const std::string& folder) {
  return path.size() > folder.size() && absl::StartsWith(path, folder) &&
         path[folder.size()] == '/';
}

// The list makes this folder: nothing of the project's is there before.
bool MakesFolder(const ChangeEntry& entry) {
  return entry.new_type() == FILE_TYPE_DIRECTORY &&
         entry.base().type() != FILE_TYPE_DIRECTORY;
}

// The list removes this folder, or what was in it.
bool RemovesFolder(const ChangeEntry& entry) {
  return entry.base().type() == FILE_TYPE_DIRECTORY &&
         (entry.new_type() != FILE_TYPE_DIRECTORY ||
          entry.kind() == CHANGE_KIND_REPLACED_FOLDER);
}

}  // namespace

Choice ChooseChanges(const ChangeSet& change_set,
                     const std::vector<size_t>& chosen) {
  const std::vector<Change>& changes = change_set.changes;
  std::set<size_t> in;
  for (size_t index : chosen) {
    if (index < changes.size()) in.insert(index);
  }
  Choice choice;
  // Until nothing more must go: each removal can make another change
  // incomplete (a folder's content, then the folder above it).
  for (bool changed = true; changed;) {
    changed = false;
    for (auto it = in.begin(); it != in.end();) {
      const ChangeEntry& entry = changes[*it].entry;
      std::string why;
      for (size_t other = 0; other < changes.size() && why.empty(); ++other) {
        if (in.count(other) != 0) continue;
        const ChangeEntry& missing = changes[other].entry;
        if (MakesFolder(missing) && Beneath(entry.path(), missing.path())) {
          why = absl::StrCat(VisiblePath(entry.path()), ": its folder ",
                             VisiblePath(missing.path()),
                             " is made by a change that is discarded");
        } else if (RemovesFolder(entry) &&
                   Beneath(missing.path(), entry.path())) {
          why =
              absl::StrCat(VisiblePath(entry.path()),
                           ": removing the folder needs the change of ",
                           VisiblePath(missing.path()), ", which is discarded");
        }
      }
      if (why.empty()) {
        ++it;
        continue;
      }
      choice.left_out.push_back(std::move(why));
      it = in.erase(it);
      changed = true;
    }
  }
  choice.chosen.header = change_set.header;
  choice.chosen.summary = change_set.summary;
  for (size_t index = 0; index < changes.size(); ++index) {
    if (in.count(index) != 0) {
      choice.chosen.changes.push_back(changes[index]);
      choice.applied.push_back(changes[index].entry.path());
      choice.indices.push_back(index);
    } else {
      choice.discarded.push_back(changes[index].entry.path());
    }
  }
  choice.chosen.summary.set_entries(choice.chosen.changes.size());
  return choice;
}

std::string AppliedSomeLine(const Choice& choice) {
  auto list = [](const std::vector<std::string>& paths) {
    std::string text;
    for (const std::string& path : paths) {
      absl::StrAppend(&text, text.empty() ? "" : ", ", VisiblePath(path));
    }
    return text;
  };
  const size_t total = choice.applied.size() + choice.discarded.size();
  return absl::StrCat(
      "The user applied ", choice.applied.size(), " of ", total,
      " changes: ", list(choice.applied),
      ". The user discarded the others (the project did not change there): ",
      list(choice.discarded));
}

}  // namespace garuda
