// Java: declarations first (classes, members, supertypes, imports), then
// every identifier resolved through scopes, imports and receiver types.
// The binder's parts: java_declarations.cc, java_types.cc,
// java_resolution.cc, java_visit.cc.
#include "lib/knowledge/java_binder.h"

#include <algorithm>
#include <functional>
#include <unordered_map>
#include <unordered_set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "lib/knowledge/binder.h"

namespace garuda::knowledge::java {

void JavaBinder::Run() {
  infos_.resize(files_.size());
  for (size_t i = 0; i < files_.size(); ++i) {
    info_ = static_cast<int>(i);
    infos_[i].file = files_[i].file();
    source_ = &index_.files[files_[i].file()].text;
    DeclareFile(files_[i].root());
  }
  for (auto& [cls, texts] : super_texts_) {
    Symbol& symbol = index_.symbols[cls];
    for (const DeclaredType& text : texts) {
      int super = ResolveType(text.text, text.info, text.cls);
      if (super >= 0 && super != cls) {
        symbol.supers.push_back(super);
      } else {
        symbol.has_external_super = true;
      }
    }
  }
  type_cache_.clear();  // entries made while supertypes were incomplete
  for (size_t i = 0; i < files_.size(); ++i) {
    info_ = static_cast<int>(i);
    file_ = files_[i].file();
    source_ = &index_.files[file_].text;
    scopes_.clear();
    cls_ = -1;
    enclosing_ = -1;
    Visit(files_[i].root());
  }
}

}  // namespace garuda::knowledge::java

namespace garuda::knowledge {

void BindJava(Index& index, const std::vector<ParsedFile>& files) {
  java::JavaBinder(index, files).Run();
}

}  // namespace garuda::knowledge
