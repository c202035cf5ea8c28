// Python binder: every occurrence, resolved.
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

int PythonBinder::Occur(TSNode node) {
  int id = AddOccurrence(index_, file_, node, Text(node));
  index_.occurrences[id].enclosing = enclosing_;
  return id;
}

void PythonBinder::OccurName(TSNode node, int scope) {
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
  // is a use of the alias (pyright's rule); the import line names the
  // original. Other imports are followed to what they import, up to the
  // first renaming import on the way.
  if (symbol >= 0) {
    int target = renamed_.count(symbol) ? symbol : FollowAlias(symbol, 0, true);
    if (target >= 0) index_.occurrences[id].symbols.push_back(target);
  }
}

void PythonBinder::VisitBlock(TSNode node, int scope) {
  for (TSNode child : NamedChildren(node)) Visit(child, scope);
}

int PythonBinder::InnerScope(TSNode node, int fallback) {
  auto it = scope_of_node_.find(Key(file_, ts_node_start_byte(node)));
  return it == scope_of_node_.end() ? fallback : it->second;
}

void PythonBinder::Visit(TSNode node, int scope) {
  if (ts_node_is_null(node)) return;
  const char* type = ts_node_type(node);
  auto is = [&](const char* t) { return strcmp(type, t) == 0; };
  if (is("comment")) return;
  if (is("string")) {
    if (in_annotation_) {
      TSNode inner = ParseAnnotationString(node);
      if (!ts_node_is_null(inner)) Visit(inner, scope);
      return;
    }
    for (TSNode child : NamedChildren(node)) {
      if (Is(child, "interpolation")) VisitBlock(child, scope);
    }
    return;
  }
  if (is("type")) {
    bool saved = in_annotation_;
    in_annotation_ = true;
    VisitBlock(node, scope);
    in_annotation_ = saved;
    return;
  }
  if ((is("assignment") || is("augmented_assignment")) &&
      scope == modules_[module_].scope &&
      Text(Field(node, "left")) == "__all__") {
    // `__all__ = ["Name", ...]`: each string names what the module
    // exports, and pyright counts it as a use of that name.
    Visit(Field(node, "left"), scope);
    TSNode right = Field(node, "right");
    if (Is(right, "list") || Is(right, "tuple")) {
      for (TSNode element : NamedChildren(right)) {
        if (!Is(element, "string")) continue;
        std::vector<TSNode> parts = NamedChildren(element);
        if (parts.size() == 3 && Is(parts[1], "string_content")) {
          OccurName(parts[1], scope);
        }
      }
    } else {
      Visit(right, scope);
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
    if (!ts_node_is_null(parameters)) VisitParameters(parameters, inner, scope);
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
      TSNode name = Is(child, "aliased_import") ? Field(child, "name") : child;
      if (!Is(name, "dotted_name")) continue;
      auto bound = bound_at_.find(Key(
          file_,
          ts_node_start_byte(Is(child, "aliased_import") ? Field(child, "alias")
                                                         : child)));
      int id = Occur(name);
      if (bound != bound_at_.end()) {
        int target = FollowAlias(bound->second, 0, true);
        if (target >= 0) index_.occurrences[id].symbols.push_back(target);
      }
      if (Is(child, "aliased_import")) {
        int alias = Occur(Field(child, "alias"));
        index_.occurrences[alias].is_declaration = true;
        if (bound != bound_at_.end()) {
          // `as b` declares b when it renames; `as a` re-exports a.
          int target = renamed_.count(bound->second)
                           ? bound->second
                           : FollowAlias(bound->second, 0, true);
          if (target >= 0) index_.occurrences[alias].symbols.push_back(target);
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
    int member =
        MemberOf(receiver, std::string(Text(attribute)), &unknown, true);
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

void PythonBinder::VisitParameters(TSNode parameters, int inner, int outer) {
  for (TSNode p : NamedChildren(parameters)) {
    TSNode annotation = Field(p, "type");
    TSNode value = Field(p, "value");
    if (!ts_node_is_null(annotation)) Visit(annotation, outer);
    if (!ts_node_is_null(value)) Visit(value, outer);
    TSNode name{};
    if (Is(p, "identifier")) {
      name = p;
    } else if (Is(p, "default_parameter") || Is(p, "typed_default_parameter")) {
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
          (Is(p, "list_splat_pattern") || Is(p, "dictionary_splat_pattern")) &&
          ts_node_named_child_count(p) > 0) {
        name = ts_node_named_child(p, 0);
      }
    }
    if (!ts_node_is_null(name) && Is(name, "identifier"))
      OccurName(name, inner);
  }
}

void PythonBinder::Prepare() {
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

void PythonBinder::RunAll() {
  for (const ParsedFile& file : files_) {
    absl::string_view path = index_.files[file.file()].path;
    for (absl::string_view init : {"/__init__.py", "/__init__.pyi"}) {
      if (absl::EndsWith(path, init)) {
        package_folders_.insert(
            std::string(path.substr(0, path.size() - init.size())));
      }
    }
  }
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

}  // namespace garuda::knowledge::python
