// Python binder: the types of values, from the source.
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

int PythonBinder::ResolveName(const std::string& name, int scope, int depth) {
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

std::string PythonBinder::Join(const std::string& package,
                               const std::string& name) {
  return package.empty() ? name : absl::StrCat(package, ".", name);
}

int PythonBinder::FollowAlias(int symbol, int depth, bool stop_at_rename) {
  auto it = aliases_.find(symbol);
  if (it == aliases_.end() || depth > 8) return symbol;
  // An import that renames (`from m import a as b`) is a name of its own
  // further along a chain: pyright counts `pkg.b` as a use of b, not of a.
  if (stop_at_rename && depth > 0 && renamed_.count(symbol)) return symbol;
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
  int found = ModuleMember(module, alias.member, alias.from_module, symbol,
                           depth + 1, stop_at_rename);
  if (found >= 0 || modules_[module].name == alias.module) return found;
  // `from a.b import c` found a module by a shorter suffix: c may be a
  // submodule of the dotted name as written.
  int sub = FindModule(Join(alias.module, alias.member), alias.from_module);
  return sub >= 0 ? modules_[sub].symbol : -1;
}

int PythonBinder::ModuleMember(int module, const std::string& name, int from,
                               int importing, int depth, bool stop_at_rename) {
  if (module < 0 || depth > 8) return -1;
  const Scope& scope = scopes_[modules_[module].scope];
  auto member = scope.names.find(name);
  // `from . import sub` in pkg/__init__.py binds `sub` in pkg itself: that
  // binding is the submodule, not a name pkg already had.
  if (member != scope.names.end() && member->second != importing) {
    if (stop_at_rename && renamed_.count(member->second)) return member->second;
    return FollowAlias(member->second, depth, stop_at_rename);
  }
  int sub = FindModule(Join(modules_[module].name, name), from);
  if (sub >= 0) return modules_[sub].symbol;
  for (const std::string& star : modules_[module].star_modules) {
    int target = FindModule(star, module);
    if (target < 0 || target == module) continue;
    int found =
        ModuleMember(target, name, module, -1, depth + 1, stop_at_rename);
    if (found >= 0) return found;
  }
  return -1;
}

int PythonBinder::FindMember(int cls, const std::string& name, bool* external,
                             int depth) {
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

TypeRef PythonBinder::TypeOfSymbol(int symbol) {
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

TypeRef PythonBinder::Infer(const std::vector<Binding>& bindings) {
  for (const Binding& b : bindings) {
    if (b.is_annotation && !IsBareQualifier(b)) return Evaluate(b);
  }
  TypeRef result;
  for (const Binding& b : bindings) {
    if (Is(b.value, "none") || b.is_annotation) continue;
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

TypeRef PythonBinder::Merge(TypeRef a, TypeRef b) {
  if (a.kind == TypeRef::kUnknown) return b;
  if (b.kind == TypeRef::kUnknown) return a;
  if (a.kind == b.kind && a.id == b.id) return a;
  return {};
}

TypeRef PythonBinder::TypeOfAnnotation(TSNode node, int scope) {
  if (Is(node, "type") && ts_node_named_child_count(node) > 0) {
    node = ts_node_named_child(node, 0);
  }
  if (Is(node, "string")) {
    TSNode inner = ParseAnnotationString(node);
    return ts_node_is_null(inner) ? TypeRef{} : TypeOfAnnotation(inner, scope);
  }
  if (Is(node, "binary_operator")) {  // Foo | None
    TypeRef left = TypeOfAnnotation(Field(node, "left"), scope);
    if (Text(Field(node, "right")) == "None") return left;
    return {};
  }
  if (Is(node, "generic_type") || Is(node, "subscript")) {
    std::string head(Text(ts_node_named_child(node, 0)));
    if ((absl::EndsWith(head, "Optional") || absl::EndsWith(head, "Final") ||
         absl::EndsWith(head, "ClassVar") ||
         absl::EndsWith(head, "Annotated")) &&
        ts_node_named_child_count(node) > 1) {
      TSNode inner = ts_node_named_child(node, 1);
      if (Is(inner, "type_parameter") && ts_node_named_child_count(inner) > 0) {
        inner = ts_node_named_child(inner, 0);
      }
      return TypeOfAnnotation(inner, scope);
    }
    static const char* kContainers[] = {
        "list",          "List",           "Sequence",
        "Iterable",      "Iterator",       "set",
        "Set",           "tuple",          "Tuple",
        "Collection",    "FrozenSet",      "Generator",
        "AsyncIterator", "AsyncGenerator", "AsyncIterable"};
    size_t dot = head.rfind('.');
    std::string bare = dot == std::string::npos ? head : head.substr(dot + 1);
    for (const char* container : kContainers) {
      if (bare != container || ts_node_named_child_count(node) < 2) continue;
      TSNode inner = ts_node_named_child(node, 1);
      if (Is(inner, "type_parameter") && ts_node_named_child_count(inner) > 0) {
        inner = ts_node_named_child(inner, 0);
      }
      TypeRef element = TypeOfAnnotation(inner, scope);
      if (element.kind == TypeRef::kInstance)
        return {TypeRef::kList, element.id};
    }
    return {TypeRef::kExternal, -1};
  }
  // typing.Self in a class: an instance of that class.
  if ((Is(node, "identifier") || Is(node, "attribute")) &&
      (Text(node) == "Self" || absl::EndsWith(Text(node), ".Self")) &&
      scopes_[scope].cls >= 0) {
    return {TypeRef::kInstance, scopes_[scope].cls};
  }
  TypeRef t = TypeOf(node, scope);
  if (t.kind == TypeRef::kClassRef) return {TypeRef::kInstance, t.id};
  if (t.kind == TypeRef::kUnknown &&
      (Is(node, "identifier") || Is(node, "attribute"))) {
    return {TypeRef::kExternal, -1};  // a library or builtin type
  }
  return {};
}

bool PythonBinder::IsBareQualifier(const Binding& binding) const {
  TSNode node = binding.value;
  if (Is(node, "type") && ts_node_named_child_count(node) > 0) {
    node = ts_node_named_child(node, 0);
  }
  if (!Is(node, "identifier") && !Is(node, "attribute")) return false;
  int file = modules_[scopes_[binding.scope].module].file;
  absl::string_view text = NodeText(node, index_.files[file].text);
  return text == "Final" || text == "ClassVar" ||
         absl::EndsWith(text, ".Final") || absl::EndsWith(text, ".ClassVar");
}

TypeRef PythonBinder::Entered(TypeRef t, bool async) {
  if (t.kind == TypeRef::kList) return {TypeRef::kInstance, t.id};
  if (t.kind != TypeRef::kInstance) return {};
  bool external = false;
  int enter = FindMember(t.id, async ? "__aenter__" : "__enter__", &external);
  // No __enter__ in the project's classes: a library base's, which
  // returns the instance itself in the standard library's context managers.
  if (enter < 0) return t;
  TypeRef entered = ReturnType(enter);
  // `-> Self` (or the defining class) on a subclass is the subclass.
  if (entered.kind == TypeRef::kInstance && IsSubclass(t.id, entered.id)) {
    return t;
  }
  return entered;
}

bool PythonBinder::IsSubclass(int cls, int base, int depth) const {
  if (cls == base) return true;
  if (cls < 0 || depth > 20) return false;
  for (int super : index_.symbols[cls].supers) {
    if (IsSubclass(super, base, depth + 1)) return true;
  }
  return false;
}

TSNode PythonBinder::ParseAnnotationString(TSNode string) {
  uint64_t key = Key(file_, ts_node_start_byte(string));
  auto cached = parsed_strings_.find(key);
  if (cached != parsed_strings_.end()) return cached->second;
  TSNode found{};
  std::vector<TSNode> parts = NamedChildren(string);
  TSNode content{};
  int contents = 0;
  for (TSNode part : parts) {
    if (Is(part, "string_content")) {
      content = part;
      ++contents;
    } else if (!Is(part, "string_start") && !Is(part, "string_end")) {
      contents = 2;  // an f-string or an escape: not a plain name
    }
  }
  if (contents == 1) {
    TSParser* parser = ts_parser_new();
    ts_parser_set_language(parser, PythonLanguage());
    TSRange range = {ts_node_start_point(content), ts_node_end_point(content),
                     ts_node_start_byte(content), ts_node_end_byte(content)};
    ts_parser_set_included_ranges(parser, &range, 1);
    TSTree* tree =
        ts_parser_parse_string(parser, nullptr, source_->data(),
                               static_cast<uint32_t>(source_->size()));
    ts_parser_delete(parser);
    if (tree != nullptr) {
      string_trees_.push_back(tree);
      TSNode root = ts_tree_root_node(tree);
      if (!ts_node_has_error(root) && ts_node_named_child_count(root) == 1) {
        TSNode statement = ts_node_named_child(root, 0);
        if (Is(statement, "expression_statement") &&
            ts_node_named_child_count(statement) == 1) {
          found = ts_node_named_child(statement, 0);
        }
      }
    }
  }
  parsed_strings_[key] = found;
  return found;
}

TypeRef PythonBinder::Evaluate(const Binding& binding) {
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
  if (binding.entered != 0) t = Entered(t, binding.entered == 2);
  source_ = saved;
  file_ = saved_file;
  return t;
}

TypeRef PythonBinder::TypeOf(TSNode node, int scope) {
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
    if (element.kind == TypeRef::kInstance) return {TypeRef::kList, element.id};
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
  // `a / b` is type(a).__truediv__(a, b): what that method returns, when a
  // is an instance of a project class that defines it.
  if (is("binary_operator")) {
    static const std::unordered_map<std::string, std::string> kDunders = {
        {"+", "__add__"},     {"-", "__sub__"},       {"*", "__mul__"},
        {"/", "__truediv__"}, {"//", "__floordiv__"}, {"%", "__mod__"},
        {"@", "__matmul__"},  {"&", "__and__"},       {"|", "__or__"},
        {"^", "__xor__"},     {"<<", "__lshift__"},   {">>", "__rshift__"},
        {"**", "__pow__"}};
    auto dunder = kDunders.find(std::string(Text(Field(node, "operator"))));
    TypeRef left = TypeOf(Field(node, "left"), scope);
    if (dunder == kDunders.end() || left.kind != TypeRef::kInstance) return {};
    bool external = false;
    int method = FindMember(left.id, dunder->second, &external);
    return method >= 0 ? ReturnType(method) : TypeRef{};
  }
  if (is("attribute")) {
    TypeRef object = TypeOf(Field(node, "object"), scope);
    std::string name(Text(Field(node, "attribute")));
    int member = MemberOf(object, name);
    if (member < 0 && object.kind == TypeRef::kInstance) {
      // A class with __getattr__: every other attribute is what it returns.
      bool external = false;
      int fallback = FindMember(object.id, "__getattr__", &external);
      if (fallback >= 0) return ReturnType(fallback);
    }
    if (member < 0) return {};
    return TypeOfSymbol(FollowAlias(member));
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
    // typing.cast(T, value) is a T.
    if (IsTypingCast(function, scope)) {
      TSNode arguments = Field(node, "arguments");
      std::vector<TSNode> parts = NamedChildren(arguments);
      if (!parts.empty() && !Is(parts[0], "keyword_argument")) {
        return TypeOfAnnotation(parts[0], scope);
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
  // `await f()`: what the coroutine returns, which is what the async
  // def's return annotation names.
  if (is("await")) {
    return ts_node_named_child_count(node) > 0
               ? TypeOf(ts_node_named_child(node, 0), scope)
               : TypeRef{};
  }
  return {};
}

bool PythonBinder::IsTypingCast(TSNode function, int scope) {
  auto from_typing = [&](const std::string& name, const std::string& member) {
    int symbol = ResolveName(name, scope);
    auto alias = aliases_.find(symbol);
    return symbol >= 0 && alias != aliases_.end() &&
           alias->second.module == "typing" && alias->second.member == member;
  };
  if (Is(function, "identifier")) {
    return Text(function) == "cast" && from_typing("cast", "cast");
  }
  if (Is(function, "attribute") &&
      Text(Field(function, "attribute")) == "cast") {
    TSNode object = Field(function, "object");
    return Is(object, "identifier") &&
           from_typing(std::string(Text(object)), "");
  }
  return false;
}

int PythonBinder::CalleeSymbol(TSNode function, int scope) {
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

TypeRef PythonBinder::ReturnType(int function) {
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

int PythonBinder::MemberOf(TypeRef object, const std::string& name,
                           bool* unknown, bool stop_at_rename) {
  if (object.kind == TypeRef::kInstance || object.kind == TypeRef::kClassRef) {
    bool external = false;
    int member = FindMember(object.id, name, &external);
    if (member < 0 && !external && unknown != nullptr) *unknown = true;
    return member;
  }
  if (object.kind == TypeRef::kModule) {
    return ModuleMember(object.id, name, object.id, -1, 0, stop_at_rename);
  }
  if (object.kind == TypeRef::kUnknown && unknown != nullptr) *unknown = true;
  return -1;
}

}  // namespace garuda::knowledge::python
