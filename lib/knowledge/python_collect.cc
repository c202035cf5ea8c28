// Python binder: the bindings of each scope.
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
#include "lib/knowledge/python_binder.h"

namespace garuda::knowledge::python {

int PythonBinder::NewScope(ScopeKind kind, int parent) {
  Scope scope;
  scope.kind = kind;
  scope.parent = parent;
  scope.module = scopes_[parent].module;
  scope.cls = scopes_[parent].cls;
  scopes_.push_back(std::move(scope));
  return static_cast<int>(scopes_.size()) - 1;
}

SymbolKind PythonBinder::KindFor(int scope, SymbolKind wanted) const {
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

int PythonBinder::Bind(int scope, TSNode name_node, SymbolKind kind) {
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

void PythonBinder::AddBinding(int symbol, TSNode value, int scope,
                              bool annotation, bool element, int entered) {
  if (symbol >= 0 && !ts_node_is_null(value)) {
    bindings_[symbol].push_back({value, scope, annotation, element, entered});
  }
}

void PythonBinder::BindTarget(TSNode target, int scope, TSNode value,
                              bool element, int value_scope, int entered) {
  if (Is(target, "identifier")) {
    int symbol = Bind(scope, target, SymbolKind::kLocal);
    AddBinding(symbol, value, value_scope >= 0 ? value_scope : scope, false,
               element, entered);
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

void PythonBinder::CollectBlock(TSNode node, int scope) {
  for (TSNode child : NamedChildren(node)) Collect(child, scope);
}

void PythonBinder::Collect(TSNode node, int scope) {
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
  if (is("function_definition")) return CollectFunction(node, scope, TSNode{});
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
      // with_statement > with_clause > with_item > as_pattern
      TSNode with = ts_node_parent(ts_node_parent(ts_node_parent(node)));
      bool async = Is(with, "with_statement") &&
                   ts_node_child_count(with) > 0 &&
                   Is(ts_node_child(with, 0), "async");
      BindTarget(target, scope, is_except ? TSNode{} : value, false, -1,
                 is_except ? 0
                 : async   ? 2
                           : 1);
    }
    return;
  }
  if (is("import_statement")) {
    for (TSNode name : NamedChildren(node)) {
      if (Is(name, "aliased_import")) {
        int symbol = Bind(scope, Field(name, "alias"), SymbolKind::kLocal);
        index_.symbols[symbol].is_import = true;
        std::string imported(Text(Field(name, "name")));
        aliases_[symbol] = {imported, "", module_};
        // `import a as a` keeps the name (the re-export idiom of PEP 484).
        if (imported != Text(Field(name, "alias"))) renamed_.insert(symbol);
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
        std::string imported(Text(Field(child, "name")));
        aliases_[symbol] = {from, imported, module_};
        if (imported != Text(Field(child, "alias"))) renamed_.insert(symbol);
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

void PythonBinder::CollectSubexpressions(TSNode node, int scope) {
  for (TSNode child : NamedChildren(node)) Collect(child, scope);
}

void PythonBinder::CollectParameters(TSNode parameters, int scope, int outer) {
  for (TSNode p : NamedChildren(parameters)) {
    TSNode name{};
    TSNode annotation = Field(p, "type");
    TSNode value = Field(p, "value");
    if (Is(p, "identifier")) {
      name = p;
    } else if (Is(p, "typed_parameter")) {
      for (TSNode c : NamedChildren(p)) {
        if (Is(c, "identifier")) name = c;
        if (Is(c, "list_splat_pattern") || Is(c, "dictionary_splat_pattern")) {
          name = ts_node_named_child(c, 0);
        }
      }
    } else if (Is(p, "default_parameter") || Is(p, "typed_default_parameter")) {
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

void PythonBinder::CollectFunction(TSNode node, int scope, TSNode decorated) {
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

void PythonBinder::PreCollectDeclarations(TSNode node, int scope) {
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

void PythonBinder::CollectClass(TSNode node, int scope) {
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

}  // namespace garuda::knowledge::python
