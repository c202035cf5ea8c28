// Java binder: types as the source writes them, and the members of a class.
#include <algorithm>
#include <functional>
#include <unordered_map>
#include <unordered_set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "lib/knowledge/binder.h"
#include "lib/knowledge/java_binder.h"

namespace garuda::knowledge::java {

int JavaBinder::NestedClass(int cls, const std::string& name, int depth) {
  if (cls < 0 || depth > 20) return -1;
  const Symbol& symbol = index_.symbols[cls];
  auto it = symbol.members.find(name);
  if (it != symbol.members.end()) {
    for (int m : it->second) {
      if (index_.symbols[m].kind == SymbolKind::kClass) return m;
    }
  }
  for (int super : symbol.supers) {
    int found = NestedClass(super, name, depth + 1);
    if (found >= 0) return found;
  }
  return -1;
}

int JavaBinder::ResolveType(const std::string& text, int info, int cls) {
  if (text.empty()) return -1;
  std::string key = absl::StrCat(text, "\x01", info, "\x01", cls);
  auto cached = type_cache_.find(key);
  if (cached != type_cache_.end()) return cached->second;
  type_cache_[key] = -1;  // cycles resolve to nothing
  int result = ResolveTypeUncached(text, info, cls);
  type_cache_[key] = result;
  return result;
}

int JavaBinder::ResolveTypeUncached(const std::string& text, int info,
                                    int cls) {
  std::vector<std::string> parts = absl::StrSplit(text, '.');
  int current = ResolveSimpleType(parts[0], info, cls);
  if (current < 0 && parts.size() > 1) {
    // A qualified name: the longest prefix that names a class.
    for (size_t n = parts.size(); n >= 1; --n) {
      std::string prefix;
      for (size_t i = 0; i < n; ++i) {
        absl::StrAppend(&prefix, i ? "." : "", parts[i]);
      }
      auto it = class_by_qname_.find(prefix);
      if (it != class_by_qname_.end()) {
        current = it->second;
        for (size_t i = n; i < parts.size() && current >= 0; ++i) {
          current = NestedClass(current, parts[i]);
        }
        return current;
      }
    }
    return -1;
  }
  for (size_t i = 1; i < parts.size() && current >= 0; ++i) {
    current = NestedClass(current, parts[i]);
  }
  return current;
}

int JavaBinder::ResolveSimpleType(const std::string& name, int info, int cls) {
  for (int c = cls; c >= 0;) {
    if (index_.symbols[c].name == name) return c;
    int nested = NestedClass(c, name);
    if (nested >= 0) return nested;
    auto outer = outer_of_.find(c);
    c = outer == outer_of_.end() ? -1 : outer->second;
  }
  const FileInfo& file = infos_[info];
  auto single = file.single_imports.find(name);
  if (single != file.single_imports.end()) {
    auto it = class_by_qname_.find(single->second);
    if (it != class_by_qname_.end()) return it->second;
    return ResolveTypeUncachedQualified(single->second);
  }
  auto same = class_by_qname_.find(
      file.package.empty() ? name : absl::StrCat(file.package, ".", name));
  if (same != class_by_qname_.end()) return same->second;
  for (const std::string& wildcard : file.wildcard_imports) {
    auto it = class_by_qname_.find(absl::StrCat(wildcard, ".", name));
    if (it != class_by_qname_.end()) return it->second;
  }
  for (const std::string& wildcard : file.static_wildcards) {
    auto it = class_by_qname_.find(absl::StrCat(wildcard, ".", name));
    if (it != class_by_qname_.end()) return it->second;
  }
  auto statics = file.static_imports.find(name);
  if (statics != file.static_imports.end()) {
    auto it = class_by_qname_.find(absl::StrCat(statics->second, ".", name));
    if (it != class_by_qname_.end()) return it->second;
  }
  return -1;
}

int JavaBinder::ResolveTypeUncachedQualified(const std::string& qualified) {
  // a.b.Outer.Inner imported by its full name.
  std::vector<std::string> parts = absl::StrSplit(qualified, '.');
  for (size_t n = parts.size(); n >= 1; --n) {
    std::string prefix;
    for (size_t i = 0; i < n; ++i)
      absl::StrAppend(&prefix, i ? "." : "", parts[i]);
    auto it = class_by_qname_.find(prefix);
    if (it == class_by_qname_.end()) continue;
    int current = it->second;
    for (size_t i = n; i < parts.size() && current >= 0; ++i) {
      current = NestedClass(current, parts[i]);
    }
    return current;
  }
  return -1;
}

bool JavaBinder::LooksLikeTypeParameter(const std::string& name) {
  return !name.empty() && name.size() <= 2 && absl::ascii_isupper(name[0]);
}

TypeRef JavaBinder::TypeOfText(const std::string& text, int info, int cls) {
  if (text.empty() || text == "var") return TypeRef::Unknown();
  // A type parameter of the method being walked (only in its own context:
  // a member's type resolved later belongs to another one).
  if (info == info_ && cls == cls_ && !type_bounds_.empty()) {
    auto bound = type_bounds_.back().find(text);
    if (bound != type_bounds_.back().end()) {
      if (bound->second.empty() || bound->second == text) {
        return TypeRef::External("Object");
      }
      std::string bound_text = bound->second;
      std::vector<std::unordered_map<std::string, std::string>> saved;
      saved.swap(type_bounds_);  // a bound names no type parameter here
      TypeRef t = TypeOfText(bound_text, info, cls);
      saved.swap(type_bounds_);
      return t;
    }
  }
  int resolved = ResolveType(text, info, cls);
  if (resolved >= 0) return TypeRef::Instance(resolved);
  if (LooksLikeTypeParameter(text)) return TypeRef::Unknown();
  size_t dot = text.rfind('.');
  return TypeRef::External(dot == std::string::npos ? text
                                                    : text.substr(dot + 1));
}

TypeRef JavaBinder::TypeOfMember(int symbol) {
  auto it = field_types_.find(symbol);
  if (it == field_types_.end()) return TypeRef::Unknown();
  return TypeOfText(it->second.text, it->second.info, it->second.cls);
}

std::vector<int> JavaBinder::FindMethods(int cls, const std::string& name,
                                         int argc, bool* external) {
  std::vector<int> result;
  std::vector<int> named_only;
  WalkSupertypes(cls, external, [&](int c, const Symbol& symbol) {
    auto it = symbol.members.find(name);
    if (it == symbol.members.end()) return false;
    for (int m : it->second) {
      const Symbol& method = index_.symbols[m];
      if (method.kind != SymbolKind::kMethod) continue;
      bool fits =
          argc < 0 || (argc >= method.min_args &&
                       (method.max_args < 0 || argc <= method.max_args));
      if (fits) result.push_back(m);
      if (named_only.empty() ||
          index_.symbols[named_only[0]].owner_class == c) {
        named_only.push_back(m);
      }
    }
    return !result.empty();
  });
  return result.empty() ? named_only : result;
}

int JavaBinder::FindField(int cls, const std::string& name, bool* external) {
  int found = -1;
  WalkSupertypes(cls, external, [&](int, const Symbol& symbol) {
    auto it = symbol.members.find(name);
    if (it == symbol.members.end()) return false;
    for (int m : it->second) {
      SymbolKind kind = index_.symbols[m].kind;
      if (kind == SymbolKind::kField || kind == SymbolKind::kEnumConstant) {
        found = m;
        return true;
      }
    }
    return false;
  });
  return found;
}

std::vector<int> JavaBinder::Constructors(int cls, int argc) {
  std::vector<int> result, all;
  if (cls < 0) return result;
  auto it = index_.symbols[cls].members.find(index_.symbols[cls].name);
  if (it == index_.symbols[cls].members.end()) return result;
  for (int m : it->second) {
    const Symbol& c = index_.symbols[m];
    if (c.kind != SymbolKind::kConstructor) continue;
    all.push_back(m);
    if (argc >= c.min_args && (c.max_args < 0 || argc <= c.max_args)) {
      result.push_back(m);
    }
  }
  return result.empty() ? all : result;
}

int JavaBinder::Outer(int cls) const {
  auto it = outer_of_.find(cls);
  return it == outer_of_.end() ? -1 : it->second;
}

int JavaBinder::FirstSuper(int cls) const {
  if (cls < 0) return -1;
  const Symbol& symbol = index_.symbols[cls];
  return symbol.supers.empty() ? -1 : symbol.supers[0];
}

}  // namespace garuda::knowledge::java
