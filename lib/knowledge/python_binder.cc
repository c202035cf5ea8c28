// Python: modules, classes and functions with their bindings first (LEGB
// scopes: a name bound anywhere in a function is local to all of it), then
// every identifier resolved through scopes, imports, aliases and the
// receiver types the source gives (self/cls, x = Foo(), annotations,
// return types).
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

namespace garuda::knowledge {
namespace {

struct TypeRef {
  // kList: a list, set, tuple or iterable whose elements are instances of
  // the class `id`.
  enum Kind { kUnknown, kExternal, kInstance, kClassRef, kModule, kList };
  Kind kind = kUnknown;
  int id = -1;  // class symbol, or module index
};

enum class ScopeKind { kModule, kClass, kFunction, kComprehension };

struct Scope {
  ScopeKind kind = ScopeKind::kModule;
  int parent = -1;
  int module = -1;
  int cls = -1;                // class scope: the class; function: its class
  int function = -1;           // the function symbol
  int self_symbol = -1;        // the first parameter of a method
  bool self_is_class = false;  // classmethod: cls
  std::unordered_map<std::string, int> names;
  std::unordered_set<std::string> globals;
  std::unordered_set<std::string> nonlocals;
};

struct Module {
  int file = -1;
  std::string name;  // dotted
  bool is_package = false;
  int scope = -1;
  int symbol = -1;
  std::vector<std::pair<int, std::string>> star_imports;  // importer scope
  std::vector<std::string> star_modules;
};

// An import binding: `name` in module `module`, or the module itself when
// `member` is empty.
struct Alias {
  std::string module;  // absolute dotted name
  std::string member;
  int from_module = -1;
};

// A value bound to a symbol, with the scope it is evaluated in.
struct Binding {
  TSNode value;
  int scope;
  bool is_annotation;
  // `for x in value`: x is an element of value.
  bool element = false;
};

uint64_t Key(int file, uint32_t byte) {
  return (static_cast<uint64_t>(file) << 32) | byte;
}

class PythonBinder {
 public:
  PythonBinder(Index& index, const std::vector<ParsedFile>& files)
      : index_(index), files_(files) {}

 private:
  absl::string_view Text(TSNode node) const { return NodeText(node, *source_); }

  void Enter(int module) {
    module_ = module;
    file_ = modules_[module].file;
    source_ = &index_.files[file_].text;
  }

  void AddModule(int i) {
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
    // Every dotted suffix, so that src/pkg/mod.py answers to "pkg.mod".
    std::vector<std::string> parts = absl::StrSplit(module.name, '.');
    for (size_t start = 0; start < parts.size(); ++start) {
      std::string suffix =
          absl::StrJoin(parts.begin() + start, parts.end(), ".");
      modules_by_suffix_[suffix].push_back(i);
    }
    modules_.push_back(std::move(module));
  }

  // The module that `dotted` names from the importing module, else -1.
  int FindModule(const std::string& dotted, int from) const {
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
    return best;
  }

  // "from ..a import b" in package p.q.r -> absolute "p.a".
  std::string AbsoluteModule(TSNode module_name, int module) {
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

  // ---- Collect: the bindings of each scope --------------------------------

  int NewScope(ScopeKind kind, int parent) {
    Scope scope;
    scope.kind = kind;
    scope.parent = parent;
    scope.module = scopes_[parent].module;
    scope.cls = scopes_[parent].cls;
    scopes_.push_back(std::move(scope));
    return static_cast<int>(scopes_.size()) - 1;
  }

  SymbolKind KindFor(int scope, SymbolKind wanted) const {
    if (wanted == SymbolKind::kClass || wanted == SymbolKind::kParameter) {
      return wanted;
    }
    switch (scopes_[scope].kind) {
      case ScopeKind::kModule:
        return wanted == SymbolKind::kFunction ? wanted : SymbolKind::kVariable;
      case ScopeKind::kClass:
        return wanted == SymbolKind::kFunction ? SymbolKind::kMethod
                                               : SymbolKind::kField;
      default:
        return wanted == SymbolKind::kFunction ? wanted : SymbolKind::kLocal;
    }
  }

  // Binds `name_node` in `scope` (or the module, for a global).
  int Bind(int scope, TSNode name_node, SymbolKind kind) {
    std::string name(Text(name_node));
    Scope* s = &scopes_[scope];
    if (s->globals.count(name)) {
      scope = modules_[s->module].scope;
      s = &scopes_[scope];
    }
    auto it = s->names.find(name);
    int symbol;
    if (it != s->names.end()) {
      symbol = it->second;
    } else {
      symbol = AddSymbol(index_, KindFor(scope, kind), name, file_, name_node);
      s->names[name] = symbol;
      if (s->kind == ScopeKind::kClass) {
        index_.symbols[symbol].owner_class = s->cls;
        index_.symbols[s->cls].members[name].push_back(symbol);
      }
    }
    bound_at_[Key(file_, ts_node_start_byte(name_node))] = symbol;
    return symbol;
  }

  void AddBinding(int symbol, TSNode value, int scope, bool annotation,
                  bool element = false) {
    if (symbol >= 0 && !ts_node_is_null(value)) {
      bindings_[symbol].push_back({value, scope, annotation, element});
    }
  }

  // Binds the names of an assignment target.
  void BindTarget(TSNode target, int scope, TSNode value, bool element = false,
                  int value_scope = -1) {
    if (Is(target, "identifier")) {
      int symbol = Bind(scope, target, SymbolKind::kLocal);
      AddBinding(symbol, value, value_scope >= 0 ? value_scope : scope, false,
                 element);
    } else if (Is(target, "pattern_list") || Is(target, "tuple_pattern") ||
               Is(target, "list_pattern") || Is(target, "tuple") ||
               Is(target, "list") || Is(target, "list_splat_pattern") ||
               Is(target, "parenthesized_expression")) {
      for (TSNode child : NamedChildren(target))
        BindTarget(child, scope, TSNode{});
    } else if (Is(target, "attribute")) {
      // self.x = value in a method: an attribute of the class.
      const Scope& s = scopes_[scope];
      TSNode object = Field(target, "object");
      if (s.self_symbol >= 0 && !s.self_is_class && Is(object, "identifier") &&
          Text(object) == index_.symbols[s.self_symbol].name) {
        pending_attributes_.push_back({target, scope, value});
      }
    }
  }

  void CollectBlock(TSNode node, int scope) {
    for (TSNode child : NamedChildren(node)) Collect(child, scope);
  }

  void Collect(TSNode node, int scope) {
    if (ts_node_is_null(node)) return;
    const char* type = ts_node_type(node);
    auto is = [&](const char* t) { return strcmp(type, t) == 0; };
    if (is("comment") || is("string")) return;
    if (is("decorated_definition")) {
      for (TSNode child : NamedChildren(node)) {
        if (Is(child, "decorator")) Collect(child, scope);
      }
      TSNode definition = Field(node, "definition");
      if (Is(definition, "function_definition")) {
        return CollectFunction(definition, scope, node);
      }
      return Collect(definition, scope);
    }
    if (is("function_definition"))
      return CollectFunction(node, scope, TSNode{});
    if (is("class_definition")) return CollectClass(node, scope);
    if (is("lambda")) {
      int inner = NewScope(ScopeKind::kFunction, scope);
      scopes_[inner].function = scopes_[scope].function;
      scope_of_node_[Key(file_, ts_node_start_byte(node))] = inner;
      TSNode parameters = Field(node, "parameters");
      if (!ts_node_is_null(parameters))
        CollectParameters(parameters, inner, scope);
      Collect(Field(node, "body"), inner);
      return;
    }
    if (is("list_comprehension") || is("set_comprehension") ||
        is("dictionary_comprehension") || is("generator_expression")) {
      int inner = NewScope(ScopeKind::kComprehension, scope);
      scopes_[inner].function = scopes_[scope].function;
      scopes_[inner].self_symbol = -1;
      scope_of_node_[Key(file_, ts_node_start_byte(node))] = inner;
      bool first = true;
      for (TSNode child : NamedChildren(node)) {
        if (Is(child, "for_in_clause")) {
          // The first iterable is evaluated outside.
          int value_scope = first ? scope : inner;
          Collect(Field(child, "right"), value_scope);
          first = false;
          for (TSNode left : NamedChildren(child)) {
            if (ts_node_eq(left, Field(child, "right"))) continue;
            BindTarget(left, inner, Field(child, "right"), true, value_scope);
          }
        } else {
          Collect(child, inner);
        }
      }
      return;
    }
    if (is("global_statement") || is("nonlocal_statement")) {
      for (TSNode name : NamedChildren(node)) {
        if (is("global_statement")) {
          scopes_[scope].globals.insert(std::string(Text(name)));
        } else {
          scopes_[scope].nonlocals.insert(std::string(Text(name)));
        }
      }
      return;
    }
    if (is("assignment")) {
      TSNode left = Field(node, "left");
      TSNode right = Field(node, "right");
      TSNode annotation = Field(node, "type");
      if (!ts_node_is_null(right)) Collect(right, scope);
      if (!ts_node_is_null(annotation)) Collect(annotation, scope);
      if (Is(right, "assignment")) {
        // a = b = value: both names get the value.
        TSNode value = right;
        while (Is(value, "assignment")) value = Field(value, "right");
        BindTarget(left, scope, value);
      } else {
        BindTarget(left, scope, right);
      }
      if (!ts_node_is_null(annotation) && Is(left, "identifier")) {
        auto it = bound_at_.find(Key(file_, ts_node_start_byte(left)));
        if (it != bound_at_.end())
          AddBinding(it->second, annotation, scope, true);
      }
      if (!Is(left, "identifier")) CollectSubexpressions(left, scope);
      return;
    }
    if (is("augmented_assignment")) {
      Collect(Field(node, "right"), scope);
      TSNode left = Field(node, "left");
      if (Is(left, "identifier")) {
        Bind(scope, left, SymbolKind::kLocal);
      } else {
        CollectSubexpressions(left, scope);
      }
      return;
    }
    if (is("named_expression")) {
      int target = scope;
      while (scopes_[target].kind == ScopeKind::kComprehension) {
        target = scopes_[target].parent;
      }
      Collect(Field(node, "value"), scope);
      int symbol = Bind(target, Field(node, "name"), SymbolKind::kLocal);
      AddBinding(symbol, Field(node, "value"), scope, false);
      return;
    }
    if (is("for_statement")) {
      BindTarget(Field(node, "left"), scope, Field(node, "right"), true);
      for (TSNode child : NamedChildren(node)) {
        if (!ts_node_eq(child, Field(node, "left"))) Collect(child, scope);
      }
      return;
    }
    if (is("as_pattern")) {
      // with x as y / except E as e
      std::vector<TSNode> children = NamedChildren(node);
      TSNode alias = Field(node, "alias");
      for (TSNode child : children) {
        if (ts_node_eq(child, alias)) continue;
        Collect(child, scope);
      }
      if (!ts_node_is_null(alias)) {
        TSNode target = alias;
        if (Is(target, "as_pattern_target") &&
            ts_node_named_child_count(target) > 0) {
          target = ts_node_named_child(target, 0);
        }
        TSNode value = children.empty() ? TSNode{} : children[0];
        bool is_except = Is(ts_node_parent(node), "except_clause");
        BindTarget(target, scope, is_except ? TSNode{} : value);
      }
      return;
    }
    if (is("import_statement")) {
      for (TSNode name : NamedChildren(node)) {
        if (Is(name, "aliased_import")) {
          int symbol = Bind(scope, Field(name, "alias"), SymbolKind::kLocal);
          index_.symbols[symbol].is_import = true;
          aliases_[symbol] = {std::string(Text(Field(name, "name"))), "",
                              module_};
          renamed_.insert(symbol);
        } else if (Is(name, "dotted_name")) {
          std::vector<TSNode> parts = NamedChildren(name);
          if (parts.empty()) continue;
          int symbol = Bind(scope, parts[0], SymbolKind::kLocal);
          index_.symbols[symbol].is_import = true;
          aliases_[symbol] = {std::string(Text(parts[0])), "", module_};
        }
      }
      return;
    }
    if (is("import_from_statement")) {
      TSNode module_name = Field(node, "module_name");
      std::string from = AbsoluteModule(module_name, module_);
      for (TSNode child : NamedChildren(node)) {
        if (ts_node_eq(child, module_name)) continue;
        if (Is(child, "wildcard_import")) {
          modules_[module_].star_modules.push_back(from);
        } else if (Is(child, "aliased_import")) {
          int symbol = Bind(scope, Field(child, "alias"), SymbolKind::kLocal);
          index_.symbols[symbol].is_import = true;
          aliases_[symbol] = {from, std::string(Text(Field(child, "name"))),
                              module_};
          renamed_.insert(symbol);
        } else if (Is(child, "dotted_name")) {
          int symbol = Bind(scope, child, SymbolKind::kLocal);
          index_.symbols[symbol].is_import = true;
          aliases_[symbol] = {from, std::string(Text(child)), module_};
        }
      }
      return;
    }
    if (is("return_statement")) {
      std::vector<TSNode> values = NamedChildren(node);
      if (collecting_function_ >= 0 && !values.empty()) {
        AddBinding(collecting_function_, values[0], scope, false);
      }
      CollectSubexpressions(node, scope);
      return;
    }
    if (is("match_statement") || is("case_clause") || is("case_pattern")) {
      CollectBlock(node, scope);
      return;
    }
    CollectSubexpressions(node, scope);
  }

  void CollectSubexpressions(TSNode node, int scope) {
    for (TSNode child : NamedChildren(node)) Collect(child, scope);
  }

  void CollectParameters(TSNode parameters, int scope, int outer) {
    for (TSNode p : NamedChildren(parameters)) {
      TSNode name{};
      TSNode annotation = Field(p, "type");
      TSNode value = Field(p, "value");
      if (Is(p, "identifier")) {
        name = p;
      } else if (Is(p, "typed_parameter")) {
        for (TSNode c : NamedChildren(p)) {
          if (Is(c, "identifier")) name = c;
          if (Is(c, "list_splat_pattern") ||
              Is(c, "dictionary_splat_pattern")) {
            name = ts_node_named_child(c, 0);
          }
        }
      } else if (Is(p, "default_parameter") ||
                 Is(p, "typed_default_parameter")) {
        name = Field(p, "name");
      } else if (Is(p, "list_splat_pattern") ||
                 Is(p, "dictionary_splat_pattern")) {
        if (ts_node_named_child_count(p) > 0) name = ts_node_named_child(p, 0);
      }
      if (!ts_node_is_null(annotation)) Collect(annotation, outer);
      if (!ts_node_is_null(value)) Collect(value, outer);
      if (ts_node_is_null(name) || !Is(name, "identifier")) continue;
      int symbol = Bind(scope, name, SymbolKind::kParameter);
      if (!ts_node_is_null(annotation))
        AddBinding(symbol, annotation, outer, true);
      if (scopes_[scope].self_symbol < 0 && scopes_[scope].cls >= 0 &&
          first_parameter_pending_) {
        scopes_[scope].self_symbol = symbol;
      }
      first_parameter_pending_ = false;
    }
    first_parameter_pending_ = false;
  }

  void CollectFunction(TSNode node, int scope, TSNode decorated) {
    TSNode name = Field(node, "name");
    int function = Bind(scope, name, SymbolKind::kFunction);
    Symbol& symbol = index_.symbols[function];
    symbol.end_line = static_cast<int>(ts_node_end_point(node).row) + 1;
    symbol.min_args = 0;
    symbol.max_args = -1;
    bool is_static = false, is_classmethod = false;
    if (!ts_node_is_null(decorated)) {
      for (TSNode d : NamedChildren(decorated)) {
        if (!Is(d, "decorator")) continue;
        std::string text(Text(d));
        if (absl::StrContains(text, "staticmethod")) is_static = true;
        if (absl::StrContains(text, "classmethod")) is_classmethod = true;
      }
    }
    symbol.is_static = is_static || is_classmethod;
    TSNode return_type = Field(node, "return_type");
    if (!ts_node_is_null(return_type)) {
      Collect(return_type, scope);
      AddBinding(function, return_type, scope, true);
    }
    int inner = NewScope(ScopeKind::kFunction, scope);
    scopes_[inner].function = function;
    bool is_method = scopes_[scope].kind == ScopeKind::kClass;
    scopes_[inner].cls = is_method ? scopes_[scope].cls : -1;
    scopes_[inner].self_is_class = is_classmethod;
    scope_of_node_[Key(file_, ts_node_start_byte(node))] = inner;
    first_parameter_pending_ = is_method && !is_static;
    CollectParameters(Field(node, "parameters"), inner, scope);
    // Globals and nonlocals first: they change where later bindings go.
    PreCollectDeclarations(Field(node, "body"), inner);
    int saved_function = collecting_function_;
    collecting_function_ = function;
    CollectBlock(Field(node, "body"), inner);
    collecting_function_ = saved_function;
  }

  void PreCollectDeclarations(TSNode node, int scope) {
    for (TSNode child : NamedChildren(node)) {
      if (Is(child, "function_definition") || Is(child, "class_definition") ||
          Is(child, "decorated_definition")) {
        continue;
      }
      if (Is(child, "global_statement") || Is(child, "nonlocal_statement")) {
        Collect(child, scope);
      } else {
        PreCollectDeclarations(child, scope);
      }
    }
  }

  void CollectClass(TSNode node, int scope) {
    TSNode name = Field(node, "name");
    int cls = Bind(scope, name, SymbolKind::kClass);
    index_.symbols[cls].end_line =
        static_cast<int>(ts_node_end_point(node).row) + 1;
    TSNode superclasses = Field(node, "superclasses");
    if (!ts_node_is_null(superclasses)) {
      for (TSNode base : NamedChildren(superclasses)) {
        if (Is(base, "keyword_argument")) {
          Collect(Field(base, "value"), scope);
          continue;
        }
        Collect(base, scope);
        base_nodes_[cls].push_back({base, scope});
      }
    }
    int inner = NewScope(ScopeKind::kClass, scope);
    scopes_[inner].cls = cls;
    scope_of_node_[Key(file_, ts_node_start_byte(node))] = inner;
    size_t pending_before = pending_attributes_.size();
    CollectBlock(Field(node, "body"), inner);
    // self.x = ... in the methods: attributes not declared in the body.
    for (size_t i = pending_before; i < pending_attributes_.size(); ++i) {
      auto [target, method_scope, value] = pending_attributes_[i];
      if (scopes_[method_scope].cls != cls) continue;
      TSNode attribute = Field(target, "attribute");
      std::string attr(Text(attribute));
      Scope& class_scope = scopes_[inner];
      int symbol;
      auto it = class_scope.names.find(attr);
      if (it != class_scope.names.end()) {
        symbol = it->second;
      } else {
        symbol = AddSymbol(index_, SymbolKind::kField, attr, file_, attribute);
        class_scope.names[attr] = symbol;
        index_.symbols[symbol].owner_class = cls;
        index_.symbols[cls].members[attr].push_back(symbol);
      }
      AddBinding(symbol, value, method_scope, false);
    }
    pending_attributes_.resize(pending_before);
  }

  // ---- Types --------------------------------------------------------------

  // The symbol a name means in `scope` (LEGB), following import aliases;
  // sets *type when the name denotes a class, module or known instance.
  int ResolveName(const std::string& name, int scope, int depth = 0) {
    int current = scope;
    const Scope& start = scopes_[scope];
    if (start.globals.count(name)) current = modules_[start.module].scope;
    bool first = true;
    while (current >= 0) {
      const Scope& s = scopes_[current];
      bool visible = first || s.kind != ScopeKind::kClass;
      if (visible && !(s.nonlocals.count(name) && first)) {
        auto it = s.names.find(name);
        if (it != s.names.end()) return it->second;
      }
      first = false;
      current = s.parent;
    }
    // Star imports of the module.
    const Module& module = modules_[scopes_[scope].module];
    if (depth < 5) {
      for (const std::string& star : module.star_modules) {
        int target = FindModule(star, scopes_[scope].module);
        if (target < 0) continue;
        int symbol = ResolveName(name, modules_[target].scope, depth + 1);
        if (symbol >= 0) return FollowAlias(symbol, depth + 1);
      }
    }
    return -1;
  }

  static std::string Join(const std::string& package, const std::string& name) {
    return package.empty() ? name : absl::StrCat(package, ".", name);
  }

  // An import alias's final symbol; the alias itself when its target is
  // outside the project.
  int FollowAlias(int symbol, int depth = 0) {
    auto it = aliases_.find(symbol);
    if (it == aliases_.end() || depth > 8) return symbol;
    const Alias& alias = it->second;
    int module = FindModule(alias.module, alias.from_module);
    if (alias.member.empty()) {
      return module >= 0 ? modules_[module].symbol : -1;
    }
    if (module < 0) {
      // `from . import x` or a package without __init__.py: x is a module.
      int sub = FindModule(Join(alias.module, alias.member), alias.from_module);
      return sub >= 0 ? modules_[sub].symbol : -1;
    }
    auto member = scopes_[modules_[module].scope].names.find(alias.member);
    if (member != scopes_[modules_[module].scope].names.end()) {
      return FollowAlias(member->second, depth + 1);
    }
    // from pkg import submodule
    int sub = FindModule(Join(modules_[module].name, alias.member),
                         alias.from_module);
    if (sub < 0) {
      sub = FindModule(Join(alias.module, alias.member), alias.from_module);
    }
    if (sub >= 0) return modules_[sub].symbol;
    for (const std::string& star : modules_[module].star_modules) {
      int target = FindModule(star, module);
      if (target < 0) continue;
      auto found = scopes_[modules_[target].scope].names.find(alias.member);
      if (found != scopes_[modules_[target].scope].names.end()) {
        return FollowAlias(found->second, depth + 1);
      }
    }
    return -1;
  }

  // Finds `name` in `cls` or its bases (depth first, as a simple MRO).
  int FindMember(int cls, const std::string& name, bool* external,
                 int depth = 0) {
    if (cls < 0 || depth > 20) return -1;
    const Symbol& symbol = index_.symbols[cls];
    auto it = symbol.members.find(name);
    if (it != symbol.members.end() && !it->second.empty()) return it->second[0];
    if (symbol.has_external_super) *external = true;
    for (int super : symbol.supers) {
      int found = FindMember(super, name, external, depth + 1);
      if (found >= 0) return found;
    }
    return -1;
  }

  TypeRef TypeOfSymbol(int symbol) {
    if (symbol < 0) return {};
    const Symbol& s = index_.symbols[symbol];
    if (s.kind == SymbolKind::kClass) return {TypeRef::kClassRef, symbol};
    if (s.kind == SymbolKind::kModule) {
      auto it = module_index_of_symbol_.find(symbol);
      if (it != module_index_of_symbol_.end())
        return {TypeRef::kModule, it->second};
      return {};
    }
    if (s.kind == SymbolKind::kFunction || s.kind == SymbolKind::kMethod)
      return {};
    auto self = self_class_.find(symbol);
    if (self != self_class_.end()) {
      return {self->second.second ? TypeRef::kClassRef : TypeRef::kInstance,
              self->second.first};
    }
    auto cached = symbol_types_.find(symbol);
    if (cached != symbol_types_.end()) return cached->second;
    if (!in_progress_.insert(symbol).second) return {};
    TypeRef result;
    auto it = bindings_.find(symbol);
    if (it != bindings_.end()) result = Infer(it->second);
    in_progress_.erase(symbol);
    // A type found inside a cycle may be partial: only an outermost answer
    // is kept.
    if (in_progress_.empty()) symbol_types_[symbol] = result;
    return result;
  }

  // An annotation decides; otherwise the values that have a known type
  // must agree (None and unknown values do not disagree, as in pyright's
  // declared type, whose known part still resolves members).
  TypeRef Infer(const std::vector<Binding>& bindings) {
    for (const Binding& b : bindings) {
      if (b.is_annotation) return Evaluate(b);
    }
    TypeRef result;
    for (const Binding& b : bindings) {
      if (Is(b.value, "none")) continue;
      TypeRef t = Evaluate(b);
      if (t.kind == TypeRef::kUnknown) continue;
      if (result.kind == TypeRef::kUnknown) {
        result = t;
      } else if (t.kind != result.kind || t.id != result.id) {
        return {};
      }
    }
    return result;
  }

  static TypeRef Merge(TypeRef a, TypeRef b) {
    if (a.kind == TypeRef::kUnknown) return b;
    if (b.kind == TypeRef::kUnknown) return a;
    if (a.kind == b.kind && a.id == b.id) return a;
    return {};
  }

  TypeRef TypeOfAnnotation(TSNode node, int scope) {
    if (Is(node, "type") && ts_node_named_child_count(node) > 0) {
      node = ts_node_named_child(node, 0);
    }
    if (Is(node, "string")) return {};  // forward reference: not parsed
    if (Is(node, "binary_operator")) {  // Foo | None
      TypeRef left = TypeOfAnnotation(Field(node, "left"), scope);
      if (Text(Field(node, "right")) == "None") return left;
      return {};
    }
    if (Is(node, "generic_type") || Is(node, "subscript")) {
      std::string head(Text(ts_node_named_child(node, 0)));
      if (absl::EndsWith(head, "Optional") &&
          ts_node_named_child_count(node) > 1) {
        TSNode inner = ts_node_named_child(node, 1);
        if (Is(inner, "type_parameter") &&
            ts_node_named_child_count(inner) > 0) {
          inner = ts_node_named_child(inner, 0);
        }
        return TypeOfAnnotation(inner, scope);
      }
      static const char* kContainers[] = {
          "list", "List",  "Sequence", "Iterable",   "Iterator", "set",
          "Set",  "tuple", "Tuple",    "Collection", "FrozenSet"};
      size_t dot = head.rfind('.');
      std::string bare = dot == std::string::npos ? head : head.substr(dot + 1);
      for (const char* container : kContainers) {
        if (bare != container || ts_node_named_child_count(node) < 2) continue;
        TSNode inner = ts_node_named_child(node, 1);
        if (Is(inner, "type_parameter") &&
            ts_node_named_child_count(inner) > 0) {
          inner = ts_node_named_child(inner, 0);
        }
        TypeRef element = TypeOfAnnotation(inner, scope);
        if (element.kind == TypeRef::kInstance)
          return {TypeRef::kList, element.id};
      }
      return {TypeRef::kExternal, -1};
    }
    TypeRef t = TypeOf(node, scope);
    if (t.kind == TypeRef::kClassRef) return {TypeRef::kInstance, t.id};
    if (t.kind == TypeRef::kUnknown &&
        (Is(node, "identifier") || Is(node, "attribute"))) {
      return {TypeRef::kExternal, -1};  // a library or builtin type
    }
    return {};
  }

  // Evaluates a binding in its own file (bindings of other modules are
  // typed lazily, from anywhere).
  TypeRef Evaluate(const Binding& binding) {
    const std::string* saved = source_;
    int saved_file = file_;
    file_ = modules_[scopes_[binding.scope].module].file;
    source_ = &index_.files[file_].text;
    TypeRef t = binding.is_annotation
                    ? TypeOfAnnotation(binding.value, binding.scope)
                    : TypeOf(binding.value, binding.scope);
    if (binding.element) {
      t = t.kind == TypeRef::kList ? TypeRef{TypeRef::kInstance, t.id}
                                   : TypeRef{};
    }
    source_ = saved;
    file_ = saved_file;
    return t;
  }

  TypeRef TypeOf(TSNode node, int scope) {
    if (ts_node_is_null(node)) return {};
    const char* type = ts_node_type(node);
    auto is = [&](const char* t) { return strcmp(type, t) == 0; };
    if (is("identifier")) {
      std::string name(Text(node));
      int symbol = ResolveName(name, scope);
      if (symbol < 0) return {};
      return TypeOfSymbol(FollowAlias(symbol));
    }
    if (is("parenthesized_expression")) {
      return TypeOf(ts_node_named_child(node, 0), scope);
    }
    if (is("list") || is("set") || is("tuple")) {
      // [Foo(), Foo()]: a list of Foo.
      TypeRef element;
      for (TSNode child : NamedChildren(node)) {
        if (Is(child, "comment")) continue;
        TypeRef t = TypeOf(child, scope);
        if (t.kind != TypeRef::kInstance) return {TypeRef::kExternal, -1};
        if (element.kind == TypeRef::kUnknown) {
          element = t;
        } else if (element.id != t.id) {
          return {TypeRef::kExternal, -1};
        }
      }
      if (element.kind == TypeRef::kInstance)
        return {TypeRef::kList, element.id};
      return {TypeRef::kExternal, -1};
    }
    if (is("list_comprehension") || is("set_comprehension") ||
        is("generator_expression")) {
      TypeRef t = TypeOf(Field(node, "body"), InnerScope(node, scope));
      if (t.kind == TypeRef::kInstance) return {TypeRef::kList, t.id};
      return {TypeRef::kExternal, -1};
    }
    if (is("subscript")) {
      TypeRef t = TypeOf(Field(node, "value"), scope);
      if (t.kind == TypeRef::kList) return {TypeRef::kInstance, t.id};
      return {};
    }
    if (is("boolean_operator")) {
      TypeRef right = TypeOf(Field(node, "right"), scope);
      if (Text(Field(node, "operator")) == "and") return right;
      return Merge(TypeOf(Field(node, "left"), scope), right);
    }
    if (is("conditional_expression")) {
      std::vector<TSNode> parts = NamedChildren(node);
      if (parts.size() < 3) return {};
      return Merge(TypeOf(parts[0], scope), TypeOf(parts[2], scope));
    }
    if (is("string") || is("concatenated_string") || is("integer") ||
        is("float") || is("dictionary") || is("dictionary_comprehension") ||
        is("true") || is("false")) {
      return {TypeRef::kExternal, -1};
    }
    if (is("none")) return {};
    if (is("attribute")) {
      TypeRef object = TypeOf(Field(node, "object"), scope);
      std::string name(Text(Field(node, "attribute")));
      int member = MemberOf(object, name);
      if (member < 0) return {};
      return TypeOfSymbol(member);
    }
    if (is("call")) {
      TSNode function = Field(node, "function");
      if (Is(function, "identifier") && Text(function) == "super") {
        int cls = scopes_[scope].cls;
        if (cls >= 0 && !index_.symbols[cls].supers.empty()) {
          return {TypeRef::kInstance, index_.symbols[cls].supers[0]};
        }
        return {};
      }
      TypeRef callee = TypeOf(function, scope);
      if (callee.kind == TypeRef::kClassRef)
        return {TypeRef::kInstance, callee.id};
      int symbol = CalleeSymbol(function, scope);
      if (symbol >= 0) return ReturnType(symbol);
      return {};
    }
    if (is("await")) return {};
    return {};
  }

  int CalleeSymbol(TSNode function, int scope) {
    if (Is(function, "identifier")) {
      int symbol = ResolveName(std::string(Text(function)), scope);
      return symbol < 0 ? -1 : FollowAlias(symbol);
    }
    if (Is(function, "attribute")) {
      TypeRef object = TypeOf(Field(function, "object"), scope);
      return MemberOf(object, std::string(Text(Field(function, "attribute"))));
    }
    return -1;
  }

  TypeRef ReturnType(int function) {
    const Symbol& s = index_.symbols[function];
    if (s.kind != SymbolKind::kFunction && s.kind != SymbolKind::kMethod)
      return {};
    auto cached = return_types_.find(function);
    if (cached != return_types_.end()) return cached->second;
    if (!in_progress_.insert(function).second) return {};
    TypeRef result;
    auto it = bindings_.find(function);
    if (it != bindings_.end()) result = Infer(it->second);
    in_progress_.erase(function);
    if (in_progress_.empty()) return_types_[function] = result;
    return result;
  }

  // The symbol `name` means on a receiver of type `object`; -1 when not a
  // project symbol or unknown.
  int MemberOf(TypeRef object, const std::string& name,
               bool* unknown = nullptr) {
    if (object.kind == TypeRef::kInstance ||
        object.kind == TypeRef::kClassRef) {
      bool external = false;
      int member = FindMember(object.id, name, &external);
      if (member < 0 && !external && unknown != nullptr) *unknown = true;
      return member;
    }
    if (object.kind == TypeRef::kModule) {
      const Module& module = modules_[object.id];
      auto it = scopes_[module.scope].names.find(name);
      if (it != scopes_[module.scope].names.end())
        return FollowAlias(it->second);
      int sub = FindModule(Join(module.name, name), object.id);
      if (sub >= 0) return modules_[sub].symbol;
      return -1;
    }
    if (object.kind == TypeRef::kUnknown && unknown != nullptr) *unknown = true;
    return -1;
  }

  // ---- Visit: every occurrence --------------------------------------------

  int Occur(TSNode node) {
    int id = AddOccurrence(index_, file_, node, Text(node));
    index_.occurrences[id].enclosing = enclosing_;
    return id;
  }

  void OccurName(TSNode node, int scope) {
    int id = Occur(node);
    auto bound = bound_at_.find(Key(file_, ts_node_start_byte(node)));
    if (bound != bound_at_.end()) {
      index_.occurrences[id].is_declaration = true;
    }
    int symbol = ResolveName(std::string(Text(node)), scope);
    if (bound != bound_at_.end() && aliases_.count(bound->second) == 0) {
      symbol = bound->second;
    }
    // A use of a renamed import (`import x as y`, `from m import a as b`)
    // is a use of the alias; the import line names the original.
    if (symbol >= 0 && !renamed_.count(symbol)) {
      int target = FollowAlias(symbol);
      if (target >= 0) index_.occurrences[id].symbols.push_back(target);
    }
  }

  void VisitBlock(TSNode node, int scope) {
    for (TSNode child : NamedChildren(node)) Visit(child, scope);
  }

  int InnerScope(TSNode node, int fallback) {
    auto it = scope_of_node_.find(Key(file_, ts_node_start_byte(node)));
    return it == scope_of_node_.end() ? fallback : it->second;
  }

  void Visit(TSNode node, int scope) {
    if (ts_node_is_null(node)) return;
    const char* type = ts_node_type(node);
    auto is = [&](const char* t) { return strcmp(type, t) == 0; };
    if (is("comment")) return;
    if (is("string")) {
      for (TSNode child : NamedChildren(node)) {
        if (Is(child, "interpolation")) VisitBlock(child, scope);
      }
      return;
    }
    if (is("decorated_definition")) {
      for (TSNode child : NamedChildren(node)) Visit(child, scope);
      return;
    }
    if (is("function_definition")) {
      TSNode name = Field(node, "name");
      OccurName(name, scope);
      int inner = InnerScope(node, scope);
      int function = scopes_[inner].function;
      for (TSNode child : NamedChildren(node)) {
        if (ts_node_eq(child, name) || Is(child, "block")) continue;
        if (Is(child, "parameters")) {
          VisitParameters(child, inner, scope);
        } else {
          Visit(child, scope);
        }
      }
      int saved = enclosing_;
      enclosing_ = function;
      VisitBlock(Field(node, "body"), inner);
      enclosing_ = saved;
      return;
    }
    if (is("class_definition")) {
      TSNode name = Field(node, "name");
      OccurName(name, scope);
      TSNode superclasses = Field(node, "superclasses");
      if (!ts_node_is_null(superclasses)) {
        for (TSNode base : NamedChildren(superclasses)) {
          if (Is(base, "keyword_argument")) {
            Visit(Field(base, "value"), scope);
          } else {
            Visit(base, scope);
          }
        }
      }
      VisitBlock(Field(node, "body"), InnerScope(node, scope));
      return;
    }
    if (is("lambda")) {
      int inner = InnerScope(node, scope);
      TSNode parameters = Field(node, "parameters");
      if (!ts_node_is_null(parameters))
        VisitParameters(parameters, inner, scope);
      Visit(Field(node, "body"), inner);
      return;
    }
    if (is("list_comprehension") || is("set_comprehension") ||
        is("dictionary_comprehension") || is("generator_expression")) {
      int inner = InnerScope(node, scope);
      bool first = true;
      for (TSNode child : NamedChildren(node)) {
        if (Is(child, "for_in_clause")) {
          Visit(Field(child, "right"), first ? scope : inner);
          first = false;
          for (TSNode left : NamedChildren(child)) {
            if (!ts_node_eq(left, Field(child, "right"))) Visit(left, inner);
          }
        } else {
          Visit(child, inner);
        }
      }
      return;
    }
    if (is("import_statement")) {
      for (TSNode name : NamedChildren(node)) {
        TSNode dotted = Is(name, "aliased_import") ? Field(name, "name") : name;
        std::vector<TSNode> parts = NamedChildren(dotted);
        std::string prefix;
        for (TSNode part : parts) {
          absl::StrAppend(&prefix, prefix.empty() ? "" : ".", Text(part));
          int module = FindModule(prefix, module_);
          int id = Occur(part);
          if (module >= 0)
            index_.occurrences[id].symbols.push_back(modules_[module].symbol);
        }
        if (Is(name, "aliased_import")) {
          int id = Occur(Field(name, "alias"));
          index_.occurrences[id].is_declaration = true;
        }
      }
      return;
    }
    if (is("import_from_statement")) {
      TSNode module_name = Field(node, "module_name");
      std::string from = AbsoluteModule(module_name, module_);
      int module = FindModule(from, module_);
      for (TSNode child : NamedChildren(node)) {
        if (ts_node_eq(child, module_name)) continue;
        TSNode name =
            Is(child, "aliased_import") ? Field(child, "name") : child;
        if (!Is(name, "dotted_name")) continue;
        auto bound = bound_at_.find(
            Key(file_, ts_node_start_byte(Is(child, "aliased_import")
                                              ? Field(child, "alias")
                                              : child)));
        int id = Occur(name);
        if (bound != bound_at_.end()) {
          int target = FollowAlias(bound->second);
          if (target >= 0) index_.occurrences[id].symbols.push_back(target);
        }
        if (Is(child, "aliased_import")) {
          int alias = Occur(Field(child, "alias"));
          index_.occurrences[alias].is_declaration = true;
          if (bound != bound_at_.end()) {
            int target = FollowAlias(bound->second);
            if (target >= 0)
              index_.occurrences[alias].symbols.push_back(target);
          }
        }
      }
      (void)module;
      return;
    }
    if (is("attribute")) {
      TSNode object = Field(node, "object");
      TSNode attribute = Field(node, "attribute");
      Visit(object, scope);
      bool unknown = false;
      TypeRef receiver = TypeOf(object, scope);
      int member = MemberOf(receiver, std::string(Text(attribute)), &unknown);
      int id = Occur(attribute);
      Occurrence& o = index_.occurrences[id];
      o.is_member = true;
      if (member >= 0) {
        o.symbols.push_back(member);
      } else if (unknown) {
        o.unknown_receiver = true;
      }
      return;
    }
    if (is("keyword_argument")) {
      // f(name=value): `name` is the callee's parameter.
      Visit(Field(node, "value"), scope);
      return;
    }
    if (is("call")) {
      TSNode function = Field(node, "function");
      TSNode arguments = Field(node, "arguments");
      Visit(function, scope);
      int argc = 0;
      if (!ts_node_is_null(arguments)) {
        for (TSNode a : NamedChildren(arguments)) {
          if (!Is(a, "comment")) ++argc;
        }
        Visit(arguments, scope);
      }
      (void)argc;
      return;
    }
    if (is("global_statement") || is("nonlocal_statement")) {
      for (TSNode name : NamedChildren(node)) {
        int id = Occur(name);
        int target =
            is("global_statement")
                ? ResolveName(std::string(Text(name)),
                              modules_[scopes_[scope].module].scope)
                : ResolveName(std::string(Text(name)), scopes_[scope].parent);
        if (target >= 0) index_.occurrences[id].symbols.push_back(target);
      }
      return;
    }
    if (is("identifier")) {
      OccurName(node, scope);
      return;
    }
    if (is("dotted_name")) {  // decorators, patterns
      VisitBlock(node, scope);
      return;
    }
    VisitBlock(node, scope);
  }

  void VisitParameters(TSNode parameters, int inner, int outer) {
    for (TSNode p : NamedChildren(parameters)) {
      TSNode annotation = Field(p, "type");
      TSNode value = Field(p, "value");
      if (!ts_node_is_null(annotation)) Visit(annotation, outer);
      if (!ts_node_is_null(value)) Visit(value, outer);
      TSNode name{};
      if (Is(p, "identifier")) {
        name = p;
      } else if (Is(p, "default_parameter") ||
                 Is(p, "typed_default_parameter")) {
        name = Field(p, "name");
      } else {
        for (TSNode c : NamedChildren(p)) {
          if (Is(c, "identifier")) name = c;
          if ((Is(c, "list_splat_pattern") ||
               Is(c, "dictionary_splat_pattern")) &&
              ts_node_named_child_count(c) > 0) {
            name = ts_node_named_child(c, 0);
          }
        }
        if (ts_node_is_null(name) &&
            (Is(p, "list_splat_pattern") ||
             Is(p, "dictionary_splat_pattern")) &&
            ts_node_named_child_count(p) > 0) {
          name = ts_node_named_child(p, 0);
        }
      }
      if (!ts_node_is_null(name) && Is(name, "identifier"))
        OccurName(name, inner);
    }
  }

 public:
  void Prepare() {
    for (size_t i = 0; i < modules_.size(); ++i) {
      module_index_of_symbol_[modules_[i].symbol] = static_cast<int>(i);
    }
    for (size_t s = 0; s < scopes_.size(); ++s) {
      if (scopes_[s].self_symbol >= 0 && scopes_[s].cls >= 0) {
        self_class_[scopes_[s].self_symbol] = {scopes_[s].cls,
                                               scopes_[s].self_is_class};
      }
    }
  }

  void RunAll() {
    for (size_t i = 0; i < files_.size(); ++i) AddModule(static_cast<int>(i));
    for (size_t i = 0; i < files_.size(); ++i) {
      Enter(static_cast<int>(i));
      CollectBlock(files_[i].root(), modules_[i].scope);
    }
    Prepare();
    for (auto& [cls, bases] : base_nodes_) {
      for (auto& [node, scope] : bases) {
        module_ = scopes_[scope].module;
        Enter(module_);
        TypeRef t = TypeOf(node, scope);
        if (t.kind == TypeRef::kClassRef && t.id != cls) {
          index_.symbols[cls].supers.push_back(t.id);
        } else {
          index_.symbols[cls].has_external_super = true;
        }
      }
    }
    // Types computed while the bases were incomplete are not kept.
    symbol_types_.clear();
    return_types_.clear();
    for (size_t i = 0; i < files_.size(); ++i) {
      Enter(static_cast<int>(i));
      enclosing_ = -1;
      VisitBlock(files_[i].root(), modules_[i].scope);
    }
  }

 private:
  Index& index_;
  const std::vector<ParsedFile>& files_;
  std::vector<Module> modules_;
  std::vector<Scope> scopes_;
  std::unordered_map<std::string, std::vector<int>> modules_by_suffix_;
  std::unordered_map<uint64_t, int> bound_at_;
  std::unordered_map<uint64_t, int> scope_of_node_;
  std::unordered_map<int, Alias> aliases_;
  std::unordered_set<int> renamed_;
  std::unordered_map<int, std::vector<Binding>> bindings_;
  std::unordered_map<int, std::vector<std::pair<TSNode, int>>> base_nodes_;
  std::unordered_map<int, int> module_index_of_symbol_;
  std::unordered_map<int, std::pair<int, bool>> self_class_;
  std::unordered_set<int> in_progress_;
  // Filled only after the bindings are all collected (types are stable).
  std::unordered_map<int, TypeRef> symbol_types_;
  std::unordered_map<int, TypeRef> return_types_;
  struct PendingAttribute {
    TSNode target;
    int scope;
    TSNode value;
  };
  std::vector<PendingAttribute> pending_attributes_;
  bool first_parameter_pending_ = false;
  int collecting_function_ = -1;

  int module_ = -1;
  int file_ = -1;
  const std::string* source_ = nullptr;
  int enclosing_ = -1;
};

}  // namespace

void BindPython(Index& index, const std::vector<ParsedFile>& files) {
  PythonBinder(index, files).RunAll();
}

}  // namespace garuda::knowledge
