#include "lib/knowledge/query.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <unordered_set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/knowledge/qualified_name.h"

namespace garuda::knowledge {

absl::string_view ProvenanceName(Provenance provenance) {
  switch (provenance) {
    case Provenance::kPrecise:
      return "precise";
    case Provenance::kSyntactic:
      return "syntactic";
    case Provenance::kSearchBased:
      return "search_based";
  }
  return "search_based";
}

UnknownReceivers DefaultUnknownReceivers(absl::string_view path) {
  // Measured (docs/code-intelligence.md): for Java, keeping the matches of
  // a name that only the target's hierarchy declares adds recall at no
  // precision cost; for Python, pyright never counts an access on an
  // unknown type, and keeping such matches only cost precision.
  if (absl::EndsWith(path, ".py") || absl::EndsWith(path, ".pyi")) {
    return UnknownReceivers::kNone;
  }
  return UnknownReceivers::kUnique;
}

namespace {

bool IsMember(const Symbol& s) {
  return s.kind == SymbolKind::kMethod || s.kind == SymbolKind::kField ||
         s.kind == SymbolKind::kEnumConstant;
}

bool IsCallable(const Symbol& s) {
  return s.kind == SymbolKind::kMethod || s.kind == SymbolKind::kFunction ||
         s.kind == SymbolKind::kConstructor;
}

// Adds the methods that `method` overrides (same name and arity, declared
// in a supertype): a call through such a supertype may run `method`.
// Same parameter types, a type parameter (T, K2) matching anything.
bool SameParameters(const Symbol& a, const Symbol& b) {
  if (a.parameter_types.size() != b.parameter_types.size()) return false;
  auto generic = [](const std::string& t) {
    return !t.empty() && t.size() <= 2 &&
           isupper(static_cast<unsigned char>(t[0]));
  };
  for (size_t i = 0; i < a.parameter_types.size(); ++i) {
    const std::string& x = a.parameter_types[i];
    const std::string& y = b.parameter_types[i];
    if (x != y && !generic(x) && !generic(y)) return false;
  }
  return true;
}

void AddOverridden(const Index& index, int method, std::set<int>& family) {
  const Symbol& m = index.symbols[method];
  // A static method hides, it does not override.
  if (m.owner_class < 0 || m.is_static) return;
  std::vector<int> queue(index.symbols[m.owner_class].supers);
  std::unordered_set<int> seen;
  for (size_t i = 0; i < queue.size(); ++i) {
    int cls = queue[i];
    if (!seen.insert(cls).second) continue;
    const Symbol& c = index.symbols[cls];
    auto it = c.members.find(m.name);
    if (it != c.members.end()) {
      for (int other : it->second) {
        const Symbol& o = index.symbols[other];
        if (o.kind == m.kind && !o.is_static && o.min_args == m.min_args &&
            o.max_args == m.max_args && SameParameters(o, m)) {
          family.insert(other);
        }
      }
    }
    for (int super : c.supers) queue.push_back(super);
  }
}

struct Target {
  std::set<int> family;
  int primary = -1;
  // The occurrence at the queried position, else -1.
  int queried = -1;
  // The name, when the position only matched by name.
  std::string unresolved_name;
  bool unresolved_member = false;
  int argc = -1;
};

Target ResolveTarget(const Index& index, const QueryPosition& position,
                     QueryResult& result) {
  Target target;
  int file = index.FileOf(position.path);
  if (file < 0) {
    result.notes.push_back(
        absl::StrCat("no indexed Java or Python file ", position.path));
    return target;
  }
  int occurrence =
      index.OccurrenceAt(position.path, position.line, position.column);
  if (occurrence < 0) {
    result.notes.push_back(absl::StrCat("no identifier at ", position.path, ":",
                                        position.line, ":", position.column));
    return target;
  }
  const Occurrence& o = index.occurrences[occurrence];
  target.queried = occurrence;
  if (o.symbols.empty()) {
    if (o.unknown_receiver) {
      target.unresolved_name = o.name;
      target.unresolved_member = o.is_member;
      target.argc = o.argc;
      result.symbol = o.name;
      result.notes.push_back(absl::StrCat(
          "the receiver of `", o.name,
          "` has no known type: every member with this name may be meant"));
    } else {
      result.notes.push_back(absl::StrCat(
          "`", o.name, "` does not resolve to a declaration in this project"));
    }
    return target;
  }
  // A name that means several overloads: all of them.
  target.primary = o.symbols[0];
  for (int symbol : o.symbols) {
    const Symbol& s = index.symbols[symbol];
    int base = s.accessor_of >= 0 ? s.accessor_of : symbol;
    target.family.insert(base);
  }
  if (o.symbols.size() > 1) {
    // `new Foo(x)` names the class and the constructor: the constructor.
    std::set<int> constructors;
    for (int symbol : target.family) {
      if (index.symbols[symbol].kind == SymbolKind::kConstructor) {
        constructors.insert(symbol);
      }
    }
    if (!constructors.empty()) target.family = constructors;
    if (o.symbols.size() > constructors.size() + 1 || constructors.size() > 1) {
      result.notes.push_back(
          "the position matches several overloads; all are included");
    }
  }
  target.primary = *target.family.begin();
  std::set<int> expanded = target.family;
  for (int symbol : target.family) {
    const Symbol& s = index.symbols[symbol];
    // The JDT rule (calls through a supertype that declares the method) is
    // Java's; pyright, the Python reference, does not follow overrides.
    if (s.kind == SymbolKind::kMethod &&
        index.files[s.file].language == Language::kJava) {
      AddOverridden(index, symbol, expanded);
    }
    if (s.kind == SymbolKind::kField && s.owner_class >= 0) {
      // Accessors generated for the field (records, Lombok).
      for (const auto& [name, members] : index.symbols[s.owner_class].members) {
        for (int m : members) {
          if (index.symbols[m].accessor_of == symbol) expanded.insert(m);
        }
      }
    }
  }
  target.family = expanded;
  const Symbol& primary = index.symbols[target.primary];
  result.symbol = absl::StrCat(SymbolKindName(primary.kind), " ",
                               QualifiedName(index, target.primary));
  return target;
}

bool ArityFits(const Symbol& s, int argc) {
  if (argc < 0 || s.kind != SymbolKind::kMethod) return true;
  return argc >= s.min_args && (s.max_args < 0 || argc <= s.max_args);
}

struct Site {
  int occurrence;
  Provenance provenance;
};

std::set<int> Ancestors(const Index& index, int cls) {
  std::set<int> out;
  std::vector<int> queue = {cls};
  for (size_t i = 0; i < queue.size(); ++i) {
    if (!out.insert(queue[i]).second) continue;
    for (int super : index.symbols[queue[i]].supers) queue.push_back(super);
  }
  return out;
}

// True when every class that declares a member `name` is in the hierarchy
// of one of `owners` (an ancestor or a descendant).
bool NameIsUnique(const Index& index, const std::string& name,
                  const std::set<int>& owners) {
  auto it = index.members_by_name.find(name);
  if (it == index.members_by_name.end()) return true;
  std::set<int> related;
  for (int owner : owners) {
    std::set<int> up = Ancestors(index, owner);
    related.insert(up.begin(), up.end());
  }
  for (int member : it->second) {
    int cls = index.symbols[member].owner_class;
    if (cls < 0 || related.count(cls)) continue;
    // A descendant of a target owner is related too.
    bool below = false;
    for (int ancestor : Ancestors(index, cls)) {
      if (owners.count(ancestor)) below = true;
    }
    if (!below) return false;
  }
  return true;
}

// The occurrences that refer to the target, declarations excluded.
std::vector<Site> ReferenceSites(const Index& index, const Target& target,
                                 UnknownReceivers policy) {
  std::vector<Site> sites;
  // Declarations are not references; a Python name bound again (a second
  // assignment, an @overload) is, as pyright counts it: there only the
  // queried binding itself is left out.
  std::set<std::tuple<int, int, int>> declarations;
  for (int symbol : target.family) {
    const Symbol& s = index.symbols[symbol];
    if (index.files[s.file].language == Language::kJava) {
      declarations.insert({s.file, s.line, s.column});
    }
  }
  if (target.queried >= 0) {
    const Occurrence& q = index.occurrences[target.queried];
    if (q.is_declaration) declarations.insert({q.file, q.line, q.column});
  }
  bool python_target =
      target.primary >= 0 &&
      index.files[index.symbols[target.primary].file].language ==
          Language::kPython;
  if (python_target) {
    // The first binding, when the query is on a use.
    const Symbol& s = index.symbols[target.primary];
    if (target.queried < 0 ||
        !index.occurrences[target.queried].is_declaration) {
      declarations.insert({s.file, s.line, s.column});
    }
  }
  std::set<int> taken;
  for (int symbol : target.family) {
    auto it = index.occurrences_of_symbol.find(symbol);
    if (it == index.occurrences_of_symbol.end()) continue;
    for (int id : it->second) {
      const Occurrence& o = index.occurrences[id];
      if (declarations.count({o.file, o.line, o.column})) continue;
      if (taken.insert(id).second)
        sites.push_back({id, Provenance::kSyntactic});
    }
  }
  // Name matches whose receiver type is unknown.
  std::vector<const Symbol*> members;
  for (int symbol : target.family) {
    const Symbol& s = index.symbols[symbol];
    if (IsMember(s)) members.push_back(&s);
  }
  std::set<std::string> names;
  std::set<int> owners;
  for (const Symbol* s : members) {
    if (s->owner_class >= 0) owners.insert(s->owner_class);
  }
  for (const Symbol* s : members) {
    if (policy == UnknownReceivers::kAll ||
        (policy == UnknownReceivers::kUnique &&
         NameIsUnique(index, s->name, owners))) {
      names.insert(s->name);
    }
  }
  if (!target.unresolved_name.empty()) names.insert(target.unresolved_name);
  for (const std::string& name : names) {
    auto it = index.unresolved_by_name.find(name);
    if (it == index.unresolved_by_name.end()) continue;
    for (int id : it->second) {
      const Occurrence& o = index.occurrences[id];
      bool fits = members.empty();
      for (const Symbol* s : members) {
        if (s->name == name && ArityFits(*s, o.argc)) fits = true;
      }
      if (!fits) continue;
      if (taken.insert(id).second)
        sites.push_back({id, Provenance::kSearchBased});
    }
  }
  return sites;
}

Hit HitOf(const Index& index, int occurrence, Provenance provenance) {
  const Occurrence& o = index.occurrences[occurrence];
  Hit hit;
  hit.path = index.files[o.file].path;
  hit.line = o.line;
  hit.column = o.column;
  hit.provenance = provenance;
  if (o.enclosing >= 0) {
    const Symbol& f = index.symbols[o.enclosing];
    hit.function = QualifiedName(index, o.enclosing);
    hit.function_path = index.files[f.file].path;
    hit.function_line = f.line;
  }
  return hit;
}

// Callers: one hit per enclosing function (its declaration), the first
// call site's provenance upgraded when any site is syntactic.
struct CallerGroup {
  int function;
  Hit hit;
};

std::vector<CallerGroup> GroupCallers(const Index& index,
                                      const std::vector<Site>& sites) {
  std::map<std::pair<int, std::string>, CallerGroup> groups;
  for (const Site& site : sites) {
    const Occurrence& o = index.occurrences[site.occurrence];
    Hit hit = HitOf(index, site.occurrence, site.provenance);
    // Module or class level: one group per file.
    std::pair<int, std::string> key = {o.enclosing,
                                       o.enclosing < 0 ? hit.path : ""};
    auto it = groups.find(key);
    if (it == groups.end()) {
      groups.emplace(key, CallerGroup{o.enclosing, hit});
    } else if (site.provenance < it->second.hit.provenance) {
      it->second.hit.provenance = site.provenance;
    }
  }
  std::vector<CallerGroup> out;
  for (auto& [key, group] : groups) out.push_back(group);
  return out;
}

// Resolves the position; false when there is nothing to look for (the
// result, empty, is approximate).
bool Start(const Index& index, const QueryPosition& position,
           const char* operation, QueryResult& result, Target& target) {
  result.operation = operation;
  result.approximate = false;
  target = ResolveTarget(index, position, result);
  // A name matched only by name is approximate whatever is found.
  if (target.family.empty()) result.approximate = true;
  return !target.family.empty() || !target.unresolved_name.empty();
}

}  // namespace

void Finish(QueryResult& result, int max_results) {
  std::stable_sort(
      result.results.begin(), result.results.end(),
      [](const Hit& a, const Hit& b) {
        return std::tie(a.provenance, a.depth, a.path, a.line, a.column) <
               std::tie(b.provenance, b.depth, b.path, b.line, b.column);
      });
  bool approximate = result.results.empty();
  for (const Hit& hit : result.results) {
    if (hit.provenance != Provenance::kPrecise) approximate = true;
  }
  result.approximate = result.approximate || approximate;
  if (max_results >= 0 &&
      static_cast<int>(result.results.size()) > max_results) {
    result.results.resize(max_results);
    result.truncated = true;
  }
}

QueryResult FindReferences(const Index& index, const QueryPosition& position,
                           const QueryOptions& options) {
  QueryResult result;
  Target target;
  if (!Start(index, position, "find_references", result, target)) return result;
  for (const Site& site :
       ReferenceSites(index, target, options.unknown_receivers)) {
    result.results.push_back(HitOf(index, site.occurrence, site.provenance));
  }
  Finish(result, options.max_results);
  return result;
}

QueryResult Callers(const Index& index, const QueryPosition& position,
                    const QueryOptions& options) {
  QueryResult result;
  Target target;
  if (!Start(index, position, "callers", result, target)) return result;
  for (const CallerGroup& group : GroupCallers(
           index, ReferenceSites(index, target, options.unknown_receivers))) {
    Hit hit = group.hit;
    hit.depth = 1;
    result.results.push_back(hit);
  }
  Finish(result, options.max_results);
  return result;
}

QueryResult Impact(const Index& index, const QueryPosition& position,
                   const QueryOptions& options) {
  QueryResult result;
  Target target;
  if (!Start(index, position, "impact", result, target)) {
    result.risk = "unknown (heuristic)";
    return result;
  }
  std::set<int> visited(target.family.begin(), target.family.end());
  std::vector<std::pair<Target, Provenance>> frontier = {
      {target, Provenance::kSyntactic}};
  std::set<std::string> module_levels;
  for (int depth = 1; depth <= std::max(1, options.impact_depth); ++depth) {
    std::vector<std::pair<Target, Provenance>> next;
    for (const auto& [current, chain] : frontier) {
      for (const CallerGroup& group : GroupCallers(
               index,
               ReferenceSites(index, current, options.unknown_receivers))) {
        Hit hit = group.hit;
        hit.depth = depth;
        // A chain is as weak as its weakest link.
        hit.provenance = std::max(hit.provenance, chain);
        if (group.function < 0) {
          if (!module_levels.insert(hit.path).second) continue;
          result.results.push_back(hit);
          continue;
        }
        if (!visited.insert(group.function).second) continue;
        result.results.push_back(hit);
        const Symbol& caller = index.symbols[group.function];
        if (!IsCallable(caller)) continue;
        Target up;
        up.family.insert(group.function);
        up.primary = group.function;
        if (caller.kind == SymbolKind::kMethod &&
            index.files[caller.file].language == Language::kJava) {
          AddOverridden(index, group.function, up.family);
        }
        next.push_back({up, hit.provenance});
      }
    }
    frontier = std::move(next);
    if (frontier.empty()) break;
  }
  int affected = static_cast<int>(result.results.size());
  std::string level = affected >= 20  ? "high"
                      : affected >= 5 ? "medium"
                                      : "low";
  result.risk = absl::StrCat(level, " (heuristic: ", affected,
                             " affected functions within depth ",
                             options.impact_depth, ")");
  Finish(result, options.max_results);
  return result;
}

}  // namespace garuda::knowledge
