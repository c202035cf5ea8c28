// Python: modules, classes and functions with their bindings first (LEGB
// scopes: a name bound anywhere in a function is local to all of it), then
// every identifier resolved through scopes, imports, aliases and the
// receiver types the source gives (self/cls, x = Foo(), annotations,
// return types).
// The binder's parts: python_collect.cc,
// python_types.cc, python_visit.cc.
#include "lib/knowledge/python_binder.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "lib/knowledge/binder.h"

namespace garuda::knowledge::python {

void PythonBinder::Enter(int module) {
  module_ = module;
  file_ = modules_[module].file;
  source_ = &index_.files[file_].text;
}

void PythonBinder::AddModule(int i) {
  Module module;
  module.file = files_[i].file();
  absl::string_view path_view = index_.files[module.file].path;
  absl::ConsumeSuffix(&path_view, ".pyi") ||
      absl::ConsumeSuffix(&path_view, ".py");
  std::string path(path_view);
  if (absl::EndsWith(path, "/__init__") || path == "__init__") {
    module.is_package = true;
    path = path.size() > 9 ? path.substr(0, path.size() - 9) : "";
  }
  module.name = absl::StrReplaceAll(path, {{"/", "."}});
  Scope scope;
  scope.kind = ScopeKind::kModule;
  scope.module = i;
  scopes_.push_back(std::move(scope));
  module.scope = static_cast<int>(scopes_.size()) - 1;
  module.symbol = AddSymbol(index_, SymbolKind::kModule, module.name,
                            module.file, files_[i].root());
  // Every dotted suffix that starts below a folder that is not a package,
  // so that src/pkg/mod.py answers to "pkg.mod" (src/ is a path root) but
  // pkg/json.py never to a top-level "json" (pkg/ is a package: `import
  // json` there is the standard library's).
  std::vector<std::string> parts = absl::StrSplit(module.name, '.');
  std::string folder;
  for (size_t start = 0; start < parts.size(); ++start) {
    if (start > 0) {
      absl::StrAppend(&folder, folder.empty() ? "" : "/", parts[start - 1]);
      if (package_folders_.count(folder)) continue;
    }
    std::string suffix = absl::StrJoin(parts.begin() + start, parts.end(), ".");
    modules_by_suffix_[suffix].push_back(i);
  }
  modules_.push_back(std::move(module));
}

int PythonBinder::FindModule(const std::string& dotted, int from) const {
  auto it = modules_by_suffix_.find(dotted);
  if (it == modules_by_suffix_.end()) return -1;
  const std::string& importer = modules_[from].name;
  int best = -1;
  size_t best_length = 0;
  int best_depth = 1 << 30;
  for (int candidate : it->second) {
    const std::string& name = modules_[candidate].name;
    size_t common = 0;
    while (common < name.size() && common < importer.size() &&
           name[common] == importer[common]) {
      ++common;
    }
    int depth = static_cast<int>(std::count(name.begin(), name.end(), '.'));
    if (best < 0 || name == dotted || common > best_length ||
        (common == best_length && depth < best_depth)) {
      if (best >= 0 && modules_[best].name == dotted) continue;
      best = candidate;
      best_length = common;
      best_depth = depth;
    }
  }
  // A stub beside its module (m.pyi next to m.py) is what an import sees,
  // as for every type checker (PEP 484): names imported from m are the
  // stub's.
  if (best >= 0) {
    for (int candidate : it->second) {
      if (modules_[candidate].name == modules_[best].name &&
          absl::EndsWith(index_.files[modules_[candidate].file].path, ".pyi")) {
        best = candidate;
      }
    }
  }
  return best;
}

std::string PythonBinder::AbsoluteModule(TSNode module_name, int module) {
  if (!Is(module_name, "relative_import"))
    return std::string(Text(module_name));
  std::string text(Text(module_name));
  size_t dots = 0;
  while (dots < text.size() && text[dots] == '.') ++dots;
  std::vector<std::string> package =
      absl::StrSplit(modules_[module].name, '.', absl::SkipEmpty());
  if (!modules_[module].is_package && !package.empty()) package.pop_back();
  for (size_t i = 1; i < dots && !package.empty(); ++i) package.pop_back();
  std::string rest = text.substr(dots);
  if (!rest.empty()) package.push_back(rest);
  return absl::StrJoin(package, ".");
}

}  // namespace garuda::knowledge::python

namespace garuda::knowledge {

void BindPython(Index& index, const std::vector<ParsedFile>& files) {
  python::PythonBinder(index, files).RunAll();
}

}  // namespace garuda::knowledge
