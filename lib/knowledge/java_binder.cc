// Java: declarations first (classes, members, supertypes, imports), then
// every identifier resolved through scopes, imports and receiver types.
#include <algorithm>
#include <functional>
#include <unordered_map>
#include <unordered_set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "lib/knowledge/binder.h"

namespace garuda::knowledge {
namespace {

struct TypeRef {
  enum Kind { kUnknown, kExternal, kInstance, kClassRef };
  Kind kind = kUnknown;
  int cls = -1;
  // An external type's simple name when known ("String", "int", "null").
  std::string name;
  static TypeRef Unknown() { return {}; }
  static TypeRef External(std::string name = "") {
    return {kExternal, -1, std::move(name)};
  }
  static TypeRef Instance(int cls) { return {kInstance, cls, ""}; }
  static TypeRef ClassRef(int cls) { return {kClassRef, cls, ""}; }
};

struct FileInfo {
  int file = -1;
  std::string package;
  std::unordered_map<std::string, std::string> single_imports;
  std::vector<std::string> wildcard_imports;
  std::unordered_map<std::string, std::string> static_imports;
  std::vector<std::string> static_wildcards;
};

struct Var {
  int symbol = -1;
  TypeRef type;
};

// Where a member's declared type is written, to resolve it lazily.
struct DeclaredType {
  std::string text;
  int info = -1;
  int cls = -1;
};

uint64_t Key(int file, uint32_t byte) {
  return (static_cast<uint64_t>(file) << 32) | byte;
}

int CountArguments(TSNode arguments) {
  if (ts_node_is_null(arguments)) return 0;
  int count = 0;
  for (TSNode child : NamedChildren(arguments)) {
    if (!Is(child, "line_comment") && !Is(child, "block_comment")) ++count;
  }
  return count;
}

// "Foo<Bar>[]" -> "Foo"; "a.b.Foo<X>" -> "a.b.Foo"; "@Ann Foo" -> "Foo".
std::string BaseTypeName(absl::string_view text) {
  std::string out;
  int depth = 0;
  for (char c : text) {
    if (c == '<') ++depth;
    if (depth == 0 && c != '[' && c != ']' && !absl::ascii_isspace(c)) {
      out.push_back(c);
    }
    if (c == '>') --depth;
  }
  size_t at = out.rfind(')');
  if (at != std::string::npos) out = out.substr(at + 1);
  return out;
}

class JavaBinder {
 public:
  JavaBinder(Index& index, const std::vector<ParsedFile>& files)
      : index_(index), files_(files) {}

  void Run() {
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

 private:
  absl::string_view Text(TSNode node) const { return NodeText(node, *source_); }

  // ---- Declarations -------------------------------------------------------

  void DeclareFile(TSNode root) {
    FileInfo& info = infos_[info_];
    for (TSNode child : NamedChildren(root)) {
      if (Is(child, "package_declaration")) {
        for (TSNode name : NamedChildren(child)) {
          if (Is(name, "scoped_identifier") || Is(name, "identifier")) {
            info.package = std::string(Text(name));
          }
        }
      } else if (Is(child, "import_declaration")) {
        bool is_static = false, wildcard = false;
        std::string name;
        for (uint32_t i = 0; i < ts_node_child_count(child); ++i) {
          TSNode part = ts_node_child(child, i);
          if (Is(part, "static")) is_static = true;
          if (Is(part, "asterisk")) wildcard = true;
          if (Is(part, "scoped_identifier") || Is(part, "identifier")) {
            name = std::string(Text(part));
          }
        }
        if (name.empty()) continue;
        size_t dot = name.rfind('.');
        std::string last =
            dot == std::string::npos ? name : name.substr(dot + 1);
        std::string scope = dot == std::string::npos ? "" : name.substr(0, dot);
        if (is_static && wildcard) {
          info.static_wildcards.push_back(name);
        } else if (is_static) {
          info.static_imports[last] = scope;
        } else if (wildcard) {
          info.wildcard_imports.push_back(name);
        } else {
          info.single_imports[last] = name;
        }
      }
    }
    DeclareIn(root, -1, info.package);
  }

  static bool IsClassNode(TSNode node) {
    return Is(node, "class_declaration") || Is(node, "interface_declaration") ||
           Is(node, "enum_declaration") || Is(node, "record_declaration") ||
           Is(node, "annotation_type_declaration");
  }

  // Finds class declarations anywhere under `node` (also local and
  // anonymous classes), with `outer` the nearest enclosing class.
  void DeclareIn(TSNode node, int outer, const std::string& prefix) {
    for (TSNode child : NamedChildren(node)) {
      if (IsClassNode(child)) {
        DeclareClass(child, outer, prefix);
      } else if (Is(child, "object_creation_expression") &&
                 !ts_node_is_null(FindChild(child, "class_body"))) {
        int anon = AddSymbol(index_, SymbolKind::kClass, "", infos_[info_].file,
                             child);
        TSNode type = Field(child, "type");
        super_texts_[anon].push_back({BaseTypeName(Text(type)), info_, outer});
        if (outer >= 0) outer_of_[anon] = outer;
        anonymous_[Key(infos_[info_].file, ts_node_start_byte(child))] = anon;
        DeclareIn(Field(child, "arguments"), outer, prefix);
        DeclareMembers(FindChild(child, "class_body"), anon, prefix);
      } else {
        DeclareIn(child, outer, prefix);
      }
    }
  }

  static TSNode FindChild(TSNode node, const char* type) {
    for (TSNode child : NamedChildren(node)) {
      if (Is(child, type)) return child;
    }
    return TSNode{};
  }

  static bool HasModifier(TSNode declaration, absl::string_view word) {
    TSNode modifiers = FindChild(declaration, "modifiers");
    if (ts_node_is_null(modifiers)) return false;
    for (uint32_t i = 0; i < ts_node_child_count(modifiers); ++i) {
      if (ts_node_type(ts_node_child(modifiers, i)) == word) return true;
    }
    return false;
  }

  std::vector<std::string> Annotations(TSNode declaration) const {
    std::vector<std::string> names;
    TSNode modifiers = FindChild(declaration, "modifiers");
    if (ts_node_is_null(modifiers)) return names;
    for (TSNode child : NamedChildren(modifiers)) {
      if (Is(child, "marker_annotation") || Is(child, "annotation")) {
        std::string name(Text(Field(child, "name")));
        size_t dot = name.rfind('.');
        names.push_back(dot == std::string::npos ? name : name.substr(dot + 1));
      }
    }
    return names;
  }

  int Declare(SymbolKind kind, TSNode name_node, int owner) {
    int file = infos_[info_].file;
    int id = AddSymbol(index_, kind, Text(name_node), file, name_node);
    declared_at_[Key(file, ts_node_start_byte(name_node))] = id;
    if (owner >= 0) {
      index_.symbols[id].owner_class = owner;
      index_.symbols[owner].members[index_.symbols[id].name].push_back(id);
    }
    return id;
  }

  void SetArity(int symbol, TSNode parameters) {
    int count = 0;
    bool varargs = false;
    for (TSNode p : NamedChildren(parameters)) {
      if (Is(p, "formal_parameter")) ++count;
      if (Is(p, "spread_parameter")) varargs = true;
    }
    index_.symbols[symbol].min_args = count;
    index_.symbols[symbol].max_args = varargs ? -1 : count;
    std::vector<DeclaredType>& types = parameter_types_[symbol];
    for (TSNode p : NamedChildren(parameters)) {
      if (Is(p, "formal_parameter")) {
        types.push_back({BaseTypeName(Text(Field(p, "type"))), info_,
                         index_.symbols[symbol].owner_class});
        std::string name = types.back().text;
        size_t dot = name.rfind('.');
        index_.symbols[symbol].parameter_types.push_back(
            dot == std::string::npos ? name : name.substr(dot + 1));
      }
    }
  }

  // Whether an argument of type `arg` can be passed for a parameter
  // declared as `param`; true when unsure.
  bool Compatible(const TypeRef& arg, const DeclaredType& param) {
    static const std::unordered_map<std::string, std::string> kBoxes = {
        {"int", "Integer"},    {"long", "Long"},     {"boolean", "Boolean"},
        {"char", "Character"}, {"double", "Double"}, {"float", "Float"},
        {"short", "Short"},    {"byte", "Byte"}};
    static const std::unordered_map<std::string, int> kWidening = {
        {"byte", 1}, {"short", 2}, {"char", 2},  {"int", 3},
        {"long", 4}, {"float", 5}, {"double", 6}};
    static const std::unordered_set<std::string> kExact = {
        "int",       "long",   "boolean", "char",    "double", "float",
        "short",     "byte",   "String",  "Integer", "Long",   "Boolean",
        "Character", "Double", "Float",   "Short",   "Byte"};
    const std::string& text = param.text;
    if (arg.kind == TypeRef::kUnknown || text.empty() || text == "Object" ||
        LooksLikeTypeParameter(text)) {
      return true;
    }
    int param_cls = ResolveType(text, param.info, param.cls);
    if (arg.kind == TypeRef::kInstance) {
      if (param_cls < 0) {
        return index_.symbols[arg.cls].has_external_super ||
               !kExact.count(text);
      }
      std::vector<int> queue = {arg.cls};
      std::unordered_set<int> seen;
      for (size_t i = 0; i < queue.size(); ++i) {
        if (queue[i] == param_cls) return true;
        if (!seen.insert(queue[i]).second) continue;
        for (int super : index_.symbols[queue[i]].supers)
          queue.push_back(super);
      }
      return false;
    }
    if (arg.kind != TypeRef::kExternal || arg.name.empty()) return true;
    const std::string& name = arg.name;
    if (name == "null") return kWidening.count(text) == 0;
    if (param_cls >= 0) return false;  // a library value into a project type
    if (name == text) return true;
    auto box = kBoxes.find(name);
    if (box != kBoxes.end() && box->second == text) return true;
    for (const auto& [primitive, boxed] : kBoxes) {
      if (boxed == name && primitive == text) return true;
    }
    auto from = kWidening.find(name);
    auto to = kWidening.find(text);
    if (from != kWidening.end() && to != kWidening.end()) {
      return from->second < to->second && name != "boolean";
    }
    if (box != kBoxes.end() && (text == "Number" || text == "Comparable")) {
      return name != "boolean";
    }
    if (text == "Number" && kExact.count(name)) {
      return name != "String" && name != "Boolean" && name != "boolean" &&
             name != "Character" && name != "char";
    }
    if (name == "String" && (text == "CharSequence" || text == "Comparable")) {
      return true;
    }
    // A final parameter type (String, a primitive, a box) takes only what
    // the rules above allow; a final argument type goes only to its few
    // supertypes; anything else may be a supertype we cannot see.
    if (kExact.count(text)) return false;
    if (kExact.count(name)) {
      return text == "Comparable" || text == "Serializable" ||
             text == "Constable" ||
             (name == "String" && text == "CharSequence");
    }
    return true;
  }

  bool ArgumentsFit(int method, const std::vector<TypeRef>& args) {
    auto it = parameter_types_.find(method);
    if (it == parameter_types_.end()) return true;
    const std::vector<DeclaredType>& params = it->second;
    for (size_t i = 0; i < args.size() && i < params.size(); ++i) {
      if (!Compatible(args[i], params[i])) return false;
    }
    return true;
  }

  std::vector<TypeRef> ArgumentTypes(TSNode arguments) {
    std::vector<TypeRef> types;
    for (TSNode a : NamedChildren(arguments)) {
      if (Is(a, "line_comment") || Is(a, "block_comment")) continue;
      types.push_back(TypeOf(a));
    }
    return types;
  }

  // An argument whose type is the parameter's exactly (the same name, the
  // same project class): javac prefers the overload with the most of them.
  bool Exact(const TypeRef& arg, const DeclaredType& param) {
    if (arg.kind == TypeRef::kInstance) {
      return ResolveType(param.text, param.info, param.cls) == arg.cls;
    }
    return arg.kind == TypeRef::kExternal && !arg.name.empty() &&
           arg.name == param.text;
  }

  // Of several overloads, those the argument types allow (all when none
  // or the types are unknown), the most exactly matching first.
  std::vector<int> ByArguments(std::vector<int> candidates, TSNode arguments) {
    if (candidates.size() < 2) return candidates;
    std::vector<TypeRef> args = ArgumentTypes(arguments);
    std::vector<int> kept;
    std::vector<int> scores;
    for (int c : candidates) {
      if (!ArgumentsFit(c, args)) continue;
      int score = 0;
      auto it = parameter_types_.find(c);
      if (it != parameter_types_.end()) {
        for (size_t i = 0; i < args.size() && i < it->second.size(); ++i) {
          if (Exact(args[i], it->second[i])) ++score;
        }
      }
      kept.push_back(c);
      scores.push_back(score);
    }
    if (kept.empty()) return candidates;
    // javac tries fixed arity before varargs.
    bool fixed = false;
    for (int c : kept) fixed = fixed || index_.symbols[c].max_args >= 0;
    if (fixed) {
      for (size_t i = 0; i < kept.size(); ++i) {
        if (index_.symbols[kept[i]].max_args < 0) scores[i] = -1;
      }
    }
    int best = *std::max_element(scores.begin(), scores.end());
    std::vector<int> most;
    for (size_t i = 0; i < kept.size(); ++i) {
      if (scores[i] == best) most.push_back(kept[i]);
    }
    return most;
  }

  void DeclareClass(TSNode node, int outer, const std::string& prefix) {
    TSNode name = Field(node, "name");
    if (ts_node_is_null(name)) return;
    int cls = Declare(SymbolKind::kClass, name, -1);
    std::string qualified = prefix.empty()
                                ? std::string(Text(name))
                                : absl::StrCat(prefix, ".", Text(name));
    class_by_qname_[qualified] = cls;
    classes_by_simple_[std::string(Text(name))].push_back(cls);
    if (outer >= 0) {
      outer_of_[cls] = outer;
      index_.symbols[outer].members[index_.symbols[cls].name].push_back(cls);
    }
    index_.symbols[cls].end_line =
        static_cast<int>(ts_node_end_point(node).row) + 1;
    auto add_supers = [&](TSNode list) {
      if (ts_node_is_null(list)) return;
      for (TSNode type : NamedChildren(list)) {
        if (Is(type, "type_list")) {
          for (TSNode t : NamedChildren(type)) {
            super_texts_[cls].push_back({BaseTypeName(Text(t)), info_, cls});
          }
        } else {
          super_texts_[cls].push_back({BaseTypeName(Text(type)), info_, cls});
        }
      }
    };
    add_supers(Field(node, "superclass"));
    add_supers(Field(node, "interfaces"));
    add_supers(FindChild(node, "extends_interfaces"));
    std::vector<std::string> annotations = Annotations(node);
    bool getters = false, setters = false;
    for (const std::string& a : annotations) {
      if (a == "Data" || a == "Getter" || a == "Value") getters = true;
      if (a == "Data" || a == "Setter") setters = true;
    }
    if (Is(node, "record_declaration")) {
      for (TSNode p : NamedChildren(Field(node, "parameters"))) {
        if (!Is(p, "formal_parameter")) continue;
        int field = Declare(SymbolKind::kField, Field(p, "name"), cls);
        field_types_[field] = {BaseTypeName(Text(Field(p, "type"))), info_,
                               cls};
        record_components_[cls].push_back(field);
      }
    }
    DeclareMembers(Field(node, "body"), cls, qualified);
    if (Is(node, "record_declaration")) {
      for (int field : record_components_[cls]) {
        AddAccessor(cls, field, index_.symbols[field].name, 0);
      }
    }
    for (int field : lombok_fields_[cls]) {
      bool g = getters || lombok_getter_.count(field) > 0;
      bool s = setters || lombok_setter_.count(field) > 0;
      std::string cap = index_.symbols[field].name;
      if (cap.empty()) continue;
      cap[0] = absl::ascii_toupper(cap[0]);
      if (g) {
        bool is_boolean = field_types_[field].text == "boolean";
        AddAccessor(cls, field, (is_boolean ? "is" : "get") + cap, 0);
      }
      if (s) AddAccessor(cls, field, "set" + cap, 1);
    }
  }

  void AddAccessor(int cls, int field, const std::string& name, int arity) {
    Symbol& owner = index_.symbols[cls];
    auto it = owner.members.find(name);
    if (it != owner.members.end()) {
      for (int m : it->second) {
        if (index_.symbols[m].kind == SymbolKind::kMethod &&
            index_.symbols[m].min_args == arity) {
          return;  // written out by hand
        }
      }
    }
    Symbol accessor = index_.symbols[field];
    accessor.id = static_cast<int>(index_.symbols.size());
    accessor.kind = SymbolKind::kMethod;
    accessor.name = name;
    accessor.members.clear();
    accessor.min_args = accessor.max_args = arity;
    accessor.accessor_of = field;
    index_.symbols.push_back(accessor);
    owner.members[name].push_back(accessor.id);
    if (arity == 0) field_types_[accessor.id] = field_types_[field];
  }

  void DeclareMembers(TSNode body, int cls, const std::string& qualified) {
    if (ts_node_is_null(body)) return;
    bool is_interface = false;
    {
      TSNode parent = ts_node_parent(body);
      is_interface = Is(parent, "interface_declaration");
    }
    for (TSNode member : NamedChildren(body)) {
      if (Is(member, "enum_body_declarations")) {
        DeclareMembers(member, cls, qualified);
      } else if (Is(member, "method_declaration")) {
        int m = Declare(SymbolKind::kMethod, Field(member, "name"), cls);
        SetArity(m, Field(member, "parameters"));
        index_.symbols[m].is_static = HasModifier(member, "static");
        index_.symbols[m].end_line =
            static_cast<int>(ts_node_end_point(member).row) + 1;
        field_types_[m] = {BaseTypeName(Text(Field(member, "type"))), info_,
                           cls};
        DeclareIn(Field(member, "body"), cls, qualified);
      } else if (Is(member, "constructor_declaration") ||
                 Is(member, "compact_constructor_declaration")) {
        int c = Declare(SymbolKind::kConstructor, Field(member, "name"), cls);
        if (Is(member, "constructor_declaration")) {
          SetArity(c, Field(member, "parameters"));
        } else {
          int n = static_cast<int>(record_components_[cls].size());
          index_.symbols[c].min_args = index_.symbols[c].max_args = n;
        }
        index_.symbols[c].end_line =
            static_cast<int>(ts_node_end_point(member).row) + 1;
        DeclareIn(Field(member, "body"), cls, qualified);
      } else if (Is(member, "field_declaration") ||
                 Is(member, "constant_declaration")) {
        std::string type = BaseTypeName(Text(Field(member, "type")));
        bool is_static = is_interface || HasModifier(member, "static");
        std::vector<std::string> annotations = Annotations(member);
        for (TSNode d : NamedChildren(member)) {
          if (!Is(d, "variable_declarator")) continue;
          int f = Declare(SymbolKind::kField, Field(d, "name"), cls);
          index_.symbols[f].is_static = is_static;
          field_types_[f] = {type, info_, cls};
          if (!is_static) lombok_fields_[cls].push_back(f);
          for (const std::string& a : annotations) {
            if (a == "Getter") lombok_getter_.insert(f);
            if (a == "Setter") lombok_setter_.insert(f);
          }
          DeclareIn(d, cls, qualified);
        }
      } else if (Is(member, "enum_constant")) {
        int e = Declare(SymbolKind::kEnumConstant, Field(member, "name"), cls);
        index_.symbols[e].is_static = true;
        field_types_[e] = {index_.symbols[cls].name, info_, cls};
        TSNode body_node = Field(member, "body");
        if (!ts_node_is_null(body_node)) {
          int anon = AddSymbol(index_, SymbolKind::kClass, "",
                               infos_[info_].file, member);
          index_.symbols[anon].supers.push_back(cls);
          outer_of_[anon] = cls;
          anonymous_[Key(infos_[info_].file, ts_node_start_byte(body_node))] =
              anon;
          DeclareMembers(body_node, anon, qualified);
        }
        DeclareIn(Field(member, "arguments"), cls, qualified);
      } else if (IsClassNode(member)) {
        DeclareClass(member, cls, qualified);
      } else if (Is(member, "annotation_type_element_declaration")) {
        int m = Declare(SymbolKind::kMethod, Field(member, "name"), cls);
        field_types_[m] = {BaseTypeName(Text(Field(member, "type"))), info_,
                           cls};
      } else {
        DeclareIn(member, cls, qualified);
      }
    }
  }

  // ---- Types --------------------------------------------------------------

  int NestedClass(int cls, const std::string& name, int depth = 0) {
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

  // The project class that `text` names in the context of file `info` and
  // class `cls`, else -1.
  int ResolveType(const std::string& text, int info, int cls) {
    if (text.empty()) return -1;
    std::string key = absl::StrCat(text, "\x01", info, "\x01", cls);
    auto cached = type_cache_.find(key);
    if (cached != type_cache_.end()) return cached->second;
    type_cache_[key] = -1;  // cycles resolve to nothing
    int result = ResolveTypeUncached(text, info, cls);
    type_cache_[key] = result;
    return result;
  }

  int ResolveTypeUncached(const std::string& text, int info, int cls) {
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

  int ResolveSimpleType(const std::string& name, int info, int cls) {
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

  int ResolveTypeUncachedQualified(const std::string& qualified) {
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

  static bool LooksLikeTypeParameter(const std::string& name) {
    return !name.empty() && name.size() <= 2 && absl::ascii_isupper(name[0]);
  }

  TypeRef TypeOfText(const std::string& text, int info, int cls) {
    if (text.empty() || text == "var") return TypeRef::Unknown();
    int resolved = ResolveType(text, info, cls);
    if (resolved >= 0) return TypeRef::Instance(resolved);
    if (LooksLikeTypeParameter(text)) return TypeRef::Unknown();
    size_t dot = text.rfind('.');
    return TypeRef::External(dot == std::string::npos ? text
                                                      : text.substr(dot + 1));
  }

  TypeRef TypeOfMember(int symbol) {
    auto it = field_types_.find(symbol);
    if (it == field_types_.end()) return TypeRef::Unknown();
    return TypeOfText(it->second.text, it->second.info, it->second.cls);
  }

  // ---- Members ------------------------------------------------------------

  // Methods named `name` that a call with `argc` arguments on `cls` means:
  // the first class up the hierarchy that declares a compatible one.
  std::vector<int> FindMethods(int cls, const std::string& name, int argc,
                               bool* external) {
    std::vector<int> result;
    std::unordered_set<int> seen;
    std::vector<int> queue = {cls};
    std::vector<int> named_only;
    for (size_t i = 0; i < queue.size(); ++i) {
      int c = queue[i];
      if (c < 0 || !seen.insert(c).second) continue;
      const Symbol& symbol = index_.symbols[c];
      if (symbol.has_external_super) *external = true;
      auto it = symbol.members.find(name);
      if (it != symbol.members.end()) {
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
        if (!result.empty()) return result;
      }
      for (int super : symbol.supers) queue.push_back(super);
    }
    return named_only;
  }

  int FindField(int cls, const std::string& name, bool* external) {
    std::unordered_set<int> seen;
    std::vector<int> queue = {cls};
    for (size_t i = 0; i < queue.size(); ++i) {
      int c = queue[i];
      if (c < 0 || !seen.insert(c).second) continue;
      const Symbol& symbol = index_.symbols[c];
      if (symbol.has_external_super) *external = true;
      auto it = symbol.members.find(name);
      if (it != symbol.members.end()) {
        for (int m : it->second) {
          SymbolKind kind = index_.symbols[m].kind;
          if (kind == SymbolKind::kField || kind == SymbolKind::kEnumConstant) {
            return m;
          }
        }
      }
      for (int super : symbol.supers) queue.push_back(super);
    }
    return -1;
  }

  std::vector<int> Constructors(int cls, int argc) {
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

  int Outer(int cls) const {
    auto it = outer_of_.find(cls);
    return it == outer_of_.end() ? -1 : it->second;
  }

  int FirstSuper(int cls) const {
    if (cls < 0) return -1;
    const Symbol& symbol = index_.symbols[cls];
    return symbol.supers.empty() ? -1 : symbol.supers[0];
  }

  // ---- Resolution ---------------------------------------------------------

  int Occur(TSNode node) {
    int id = AddOccurrence(index_, file_, node, Text(node));
    index_.occurrences[id].enclosing = enclosing_;
    return id;
  }

  void OccurDeclaration(TSNode name_node) {
    if (ts_node_is_null(name_node)) return;
    auto it = declared_at_.find(Key(file_, ts_node_start_byte(name_node)));
    int id = Occur(name_node);
    index_.occurrences[id].is_declaration = true;
    if (it != declared_at_.end()) {
      index_.occurrences[id].symbols.push_back(it->second);
    }
  }

  Var* Lookup(const std::string& name) {
    for (auto scope = scopes_.rbegin(); scope != scopes_.rend(); ++scope) {
      auto it = scope->find(name);
      if (it != scope->end()) return &it->second;
    }
    return nullptr;
  }

  void DeclareLocal(TSNode name_node, TypeRef type, SymbolKind kind) {
    if (ts_node_is_null(name_node) || scopes_.empty()) return;
    int symbol = AddSymbol(index_, kind, Text(name_node), file_, name_node);
    int id = Occur(name_node);
    index_.occurrences[id].is_declaration = true;
    index_.occurrences[id].symbols.push_back(symbol);
    scopes_.back()[std::string(Text(name_node))] = {symbol, type};
  }

  // What a plain name in an expression means.
  struct NameMeaning {
    int symbol = -1;
    TypeRef type;
  };

  NameMeaning ResolveName(const std::string& name) {
    NameMeaning meaning;
    if (Var* var = Lookup(name)) {
      meaning.symbol = var->symbol;
      meaning.type = var->type;
      return meaning;
    }
    for (int c = cls_; c >= 0; c = Outer(c)) {
      bool external = false;
      int field = FindField(c, name, &external);
      if (field >= 0) {
        meaning.symbol = field;
        meaning.type = TypeOfMember(field);
        return meaning;
      }
    }
    const FileInfo& info = infos_[info_];
    auto statics = info.static_imports.find(name);
    if (statics != info.static_imports.end()) {
      int owner = ResolveTypeUncachedQualified(statics->second);
      bool external = false;
      int field = owner >= 0 ? FindField(owner, name, &external) : -1;
      if (field >= 0) {
        meaning.symbol = field;
        meaning.type = TypeOfMember(field);
        return meaning;
      }
    }
    for (const std::string& wildcard : info.static_wildcards) {
      int owner = ResolveTypeUncachedQualified(wildcard);
      bool external = false;
      int field = owner >= 0 ? FindField(owner, name, &external) : -1;
      if (field >= 0) {
        meaning.symbol = field;
        meaning.type = TypeOfMember(field);
        return meaning;
      }
    }
    int cls = ResolveType(name, info_, cls_);
    if (cls >= 0) {
      meaning.symbol = cls;
      meaning.type = TypeRef::ClassRef(cls);
      return meaning;
    }
    meaning.type = absl::ascii_isupper(name.empty() ? 'a' : name[0])
                       ? TypeRef::External()  // a library class
                       : TypeRef::Unknown();
    return meaning;
  }

  // The static type of an expression, as far as the syntax gives it.
  TypeRef TypeOf(TSNode node) {
    if (ts_node_is_null(node)) return TypeRef::Unknown();
    const char* type = ts_node_type(node);
    if (strcmp(type, "this") == 0) return TypeRef::Instance(cls_);
    if (strcmp(type, "super") == 0) {
      int super = FirstSuper(cls_);
      return super >= 0 ? TypeRef::Instance(super) : TypeRef::External();
    }
    if (strcmp(type, "identifier") == 0) {
      return ResolveName(std::string(Text(node))).type;
    }
    if (strcmp(type, "parenthesized_expression") == 0) {
      std::vector<TSNode> children = NamedChildren(node);
      return children.empty() ? TypeRef::Unknown() : TypeOf(children[0]);
    }
    if (strcmp(type, "cast_expression") == 0) {
      return TypeOfText(BaseTypeName(Text(Field(node, "type"))), info_, cls_);
    }
    if (strcmp(type, "object_creation_expression") == 0) {
      auto anon = anonymous_.find(Key(file_, ts_node_start_byte(node)));
      if (anon != anonymous_.end()) return TypeRef::Instance(anon->second);
      return TypeOfText(BaseTypeName(Text(Field(node, "type"))), info_, cls_);
    }
    if (strcmp(type, "string_literal") == 0 ||
        strcmp(type, "text_block") == 0) {
      return TypeRef::External("String");
    }
    if (strcmp(type, "decimal_integer_literal") == 0 ||
        strcmp(type, "hex_integer_literal") == 0) {
      absl::string_view text = Text(node);
      return TypeRef::External(
          !text.empty() && (text.back() == 'L' || text.back() == 'l') ? "long"
                                                                      : "int");
    }
    if (strcmp(type, "decimal_floating_point_literal") == 0) {
      absl::string_view text = Text(node);
      return TypeRef::External(
          !text.empty() && (text.back() == 'f' || text.back() == 'F')
              ? "float"
              : "double");
    }
    if (strcmp(type, "true") == 0 || strcmp(type, "false") == 0) {
      return TypeRef::External("boolean");
    }
    if (strcmp(type, "character_literal") == 0)
      return TypeRef::External("char");
    if (strcmp(type, "binary_expression") == 0) {
      std::string op(Text(Field(node, "operator")));
      if (op == "==" || op == "!=" || op == "<" || op == ">" || op == "<=" ||
          op == ">=" || op == "&&" || op == "||") {
        return TypeRef::External("boolean");
      }
      TypeRef left = TypeOf(Field(node, "left"));
      TypeRef right = TypeOf(Field(node, "right"));
      if (op == "+" && (left.name == "String" || right.name == "String")) {
        return TypeRef::External("String");
      }
      return TypeRef::Unknown();
    }
    if (strcmp(type, "null_literal") == 0) return TypeRef::External("null");
    if (strcmp(type, "field_access") == 0) {
      TypeRef object = TypeOf(Field(node, "object"));
      std::string name(Text(Field(node, "field")));
      if (object.kind == TypeRef::kInstance ||
          object.kind == TypeRef::kClassRef) {
        bool external = false;
        int field = FindField(object.cls, name, &external);
        if (field >= 0) return TypeOfMember(field);
        if (object.kind == TypeRef::kClassRef) {
          int nested = NestedClass(object.cls, name);
          if (nested >= 0) return TypeRef::ClassRef(nested);
        }
        return external ? TypeRef::External() : TypeRef::Unknown();
      }
      if (object.kind == TypeRef::kExternal) return TypeRef::External();
      // Perhaps a qualified class name: a.b.Foo.
      int cls = ResolveType(std::string(Text(node)), info_, cls_);
      if (cls >= 0) return TypeRef::ClassRef(cls);
      return TypeRef::Unknown();
    }
    if (strcmp(type, "method_invocation") == 0) {
      std::vector<int> methods = MethodsOfCall(node, nullptr);
      if (methods.empty()) return TypeRef::Unknown();
      return TypeOfMember(methods[0]);
    }
    return TypeRef::Unknown();
  }

  // The methods a call means. *unknown is set when the receiver's type is
  // unknown (then the result is empty).
  std::vector<int> MethodsOfCall(TSNode node, bool* unknown) {
    std::vector<int> methods = MethodsOfCallByArity(node, unknown);
    return ByArguments(std::move(methods), Field(node, "arguments"));
  }

  std::vector<int> MethodsOfCallByArity(TSNode node, bool* unknown) {
    std::string name(Text(Field(node, "name")));
    int argc = CountArguments(Field(node, "arguments"));
    TSNode object = Field(node, "object");
    bool external = false;
    if (ts_node_is_null(object)) {
      for (int c = cls_; c >= 0; c = Outer(c)) {
        std::vector<int> methods = FindMethods(c, name, argc, &external);
        if (!methods.empty()) return methods;
      }
      const FileInfo& info = infos_[info_];
      auto statics = info.static_imports.find(name);
      std::vector<std::string> owners;
      if (statics != info.static_imports.end())
        owners.push_back(statics->second);
      for (const std::string& w : info.static_wildcards) owners.push_back(w);
      for (const std::string& owner_name : owners) {
        int owner = ResolveTypeUncachedQualified(owner_name);
        if (owner < 0) continue;
        std::vector<int> methods = FindMethods(owner, name, argc, &external);
        if (!methods.empty()) return methods;
      }
      if (!external && cls_ >= 0 && unknown != nullptr) {
        // A class without library supertypes must declare what it calls;
        // not finding it means our view is incomplete.
        *unknown = true;
      }
      return {};
    }
    TypeRef receiver = TypeOf(object);
    if (receiver.kind == TypeRef::kInstance ||
        receiver.kind == TypeRef::kClassRef) {
      std::vector<int> methods =
          FindMethods(receiver.cls, name, argc, &external);
      if (methods.empty() && !external && unknown != nullptr) *unknown = true;
      return methods;
    }
    if (receiver.kind == TypeRef::kUnknown && unknown != nullptr)
      *unknown = true;
    return {};
  }

  void PushScope() { scopes_.emplace_back(); }
  void PopScope() { scopes_.pop_back(); }

  void VisitChildren(TSNode node) {
    for (TSNode child : NamedChildren(node)) Visit(child);
  }

  void VisitClassBody(TSNode body, int cls) {
    int saved_cls = cls_, saved_enclosing = enclosing_;
    auto saved_scopes = std::move(scopes_);
    scopes_.clear();
    // Locals of the enclosing method stay visible in local and anonymous
    // classes.
    for (auto& scope : saved_scopes) scopes_.push_back(scope);
    cls_ = cls;
    enclosing_ = -1;
    VisitChildren(body);
    cls_ = saved_cls;
    enclosing_ = saved_enclosing;
    scopes_ = std::move(saved_scopes);
  }

  void VisitParameters(TSNode parameters) {
    for (TSNode p : NamedChildren(parameters)) {
      if (Is(p, "formal_parameter")) {
        TSNode type = Field(p, "type");
        Visit(type);
        DeclareLocal(Field(p, "name"),
                     TypeOfText(BaseTypeName(Text(type)), info_, cls_),
                     SymbolKind::kParameter);
      } else if (Is(p, "spread_parameter")) {
        for (TSNode c : NamedChildren(p)) {
          if (Is(c, "variable_declarator")) {
            DeclareLocal(Field(c, "name"), TypeRef::External(),
                         SymbolKind::kParameter);
          } else {
            Visit(c);
          }
        }
      } else if (Is(p, "identifier")) {
        DeclareLocal(p, TypeRef::Unknown(), SymbolKind::kParameter);
      } else {
        Visit(p);
      }
    }
  }

  void Visit(TSNode node) {
    if (ts_node_is_null(node)) return;
    const char* type = ts_node_type(node);
    auto is = [&](const char* t) { return strcmp(type, t) == 0; };
    if (is("line_comment") || is("block_comment") || is("string_literal") ||
        is("text_block") || is("character_literal") ||
        is("package_declaration")) {
      return;
    }
    if (is("import_declaration")) return VisitImport(node);
    if (IsClassNode(node)) {
      OccurDeclaration(Field(node, "name"));
      auto it = declared_at_.find(
          Key(file_, ts_node_start_byte(Field(node, "name"))));
      int cls = it == declared_at_.end() ? -1 : it->second;
      TSNode body = Field(node, "body");
      int saved = cls_;
      cls_ = cls;
      for (TSNode child : NamedChildren(node)) {
        if (ts_node_eq(child, body) || ts_node_eq(child, Field(node, "name"))) {
          continue;
        }
        if (Is(child, "formal_parameters")) {  // record components
          for (TSNode p : NamedChildren(child)) {
            Visit(Field(p, "type"));
            OccurDeclaration(Field(p, "name"));
          }
          continue;
        }
        Visit(child);
      }
      cls_ = saved;
      if (!ts_node_is_null(body)) VisitClassBody(body, cls);
      return;
    }
    if (is("method_declaration") || is("constructor_declaration") ||
        is("compact_constructor_declaration")) {
      TSNode name = Field(node, "name");
      auto it = declared_at_.find(Key(file_, ts_node_start_byte(name)));
      OccurDeclaration(name);
      int saved = enclosing_;
      enclosing_ = it == declared_at_.end() ? -1 : it->second;
      PushScope();
      for (TSNode child : NamedChildren(node)) {
        if (ts_node_eq(child, name)) continue;
        if (Is(child, "formal_parameters")) {
          VisitParameters(child);
        } else {
          Visit(child);
        }
      }
      PopScope();
      enclosing_ = saved;
      return;
    }
    if (is("field_declaration") || is("constant_declaration")) {
      for (TSNode child : NamedChildren(node)) {
        if (Is(child, "variable_declarator")) {
          OccurDeclaration(Field(child, "name"));
          TSNode value = Field(child, "value");
          if (!ts_node_is_null(value)) Visit(value);
        } else {
          Visit(child);
        }
      }
      return;
    }
    if (is("local_variable_declaration")) {
      TSNode type_node = Field(node, "type");
      std::string type_text = BaseTypeName(Text(type_node));
      for (TSNode child : NamedChildren(node)) {
        if (Is(child, "variable_declarator")) {
          TSNode value = Field(child, "value");
          TypeRef t = TypeOfText(type_text, info_, cls_);
          if (!ts_node_is_null(value)) {
            Visit(value);
            if (type_text == "var") t = TypeOf(value);
          }
          DeclareLocal(Field(child, "name"), t, SymbolKind::kLocal);
        } else {
          Visit(child);
        }
      }
      return;
    }
    if (is("enhanced_for_statement")) {
      PushScope();
      TSNode type_node = Field(node, "type");
      Visit(type_node);
      Visit(Field(node, "value"));
      DeclareLocal(Field(node, "name"),
                   TypeOfText(BaseTypeName(Text(type_node)), info_, cls_),
                   SymbolKind::kLocal);
      Visit(Field(node, "body"));
      PopScope();
      return;
    }
    if (is("catch_formal_parameter") || is("resource")) {
      TSNode type_node = Field(node, "type");
      if (ts_node_is_null(type_node)) type_node = FindChild(node, "catch_type");
      TSNode name = Field(node, "name");
      for (TSNode child : NamedChildren(node)) {
        if (!ts_node_eq(child, name)) Visit(child);
      }
      if (!ts_node_is_null(name)) {
        std::string text = BaseTypeName(Text(type_node));
        TypeRef t = TypeOfText(text, info_, cls_);
        if (text.empty() || text == "var") t = TypeOf(Field(node, "value"));
        DeclareLocal(name, t, SymbolKind::kLocal);
      }
      return;
    }
    if (is("instanceof_expression")) {
      Visit(Field(node, "left"));
      TSNode right = Field(node, "right");
      Visit(right);
      TSNode name = Field(node, "name");
      if (!ts_node_is_null(name)) {
        DeclareLocal(name, TypeOfText(BaseTypeName(Text(right)), info_, cls_),
                     SymbolKind::kLocal);
      }
      for (TSNode child : NamedChildren(node)) {
        if (Is(child, "record_pattern") || Is(child, "type_pattern"))
          Visit(child);
      }
      return;
    }
    if (is("type_pattern")) {
      TSNode type_node{};
      for (TSNode child : NamedChildren(node)) {
        if (Is(child, "identifier")) {
          DeclareLocal(child,
                       TypeOfText(BaseTypeName(Text(type_node)), info_, cls_),
                       SymbolKind::kLocal);
        } else {
          type_node = child;
          Visit(child);
        }
      }
      return;
    }
    if (is("lambda_expression")) {
      PushScope();
      TSNode parameters = Field(node, "parameters");
      if (Is(parameters, "identifier")) {
        DeclareLocal(parameters, TypeRef::Unknown(), SymbolKind::kParameter);
      } else if (!ts_node_is_null(parameters)) {
        VisitParameters(parameters);
      }
      Visit(Field(node, "body"));
      PopScope();
      return;
    }
    if (is("block") || is("for_statement") || is("switch_block") ||
        is("switch_block_statement_group") ||
        is("try_with_resources_statement") || is("catch_clause") ||
        is("constructor_body") || is("switch_rule")) {
      PushScope();
      VisitChildren(node);
      PopScope();
      return;
    }
    if (is("method_invocation")) return VisitCall(node);
    if (is("field_access")) {
      TSNode object = Field(node, "object");
      TSNode field = Field(node, "field");
      Visit(object);
      TypeRef receiver = TypeOf(object);
      int id = Occur(field);
      Occurrence& o = index_.occurrences[id];
      o.is_member = true;
      std::string name(Text(field));
      if (receiver.kind == TypeRef::kInstance ||
          receiver.kind == TypeRef::kClassRef) {
        bool external = false;
        int found = FindField(receiver.cls, name, &external);
        if (found < 0 && receiver.kind == TypeRef::kClassRef) {
          found = NestedClass(receiver.cls, name);
        }
        if (found >= 0) {
          index_.occurrences[id].symbols.push_back(found);
        } else if (!external) {
          index_.occurrences[id].unknown_receiver = true;
        }
      } else if (receiver.kind == TypeRef::kUnknown) {
        int cls = ResolveType(std::string(Text(node)), info_, cls_);
        if (cls >= 0) {
          o.symbols.push_back(cls);
        } else {
          o.unknown_receiver = true;
        }
      }
      return;
    }
    if (is("object_creation_expression")) {
      TSNode type_node = Field(node, "type");
      TSNode arguments = Field(node, "arguments");
      int argc = CountArguments(arguments);
      TSNode name_node = type_node;
      while (Is(name_node, "generic_type") ||
             Is(name_node, "scoped_type_identifier")) {
        std::vector<TSNode> parts = NamedChildren(name_node);
        if (Is(name_node, "generic_type")) {
          for (size_t i = 1; i < parts.size(); ++i) Visit(parts[i]);
          name_node = parts[0];
        } else {
          for (size_t i = 0; i + 1 < parts.size(); ++i) Visit(parts[i]);
          name_node = parts.back();
        }
      }
      for (TSNode child : NamedChildren(node)) {
        if (!ts_node_eq(child, type_node) && !Is(child, "class_body"))
          Visit(child);
      }
      if (Is(name_node, "type_identifier")) {
        std::string text = BaseTypeName(Text(type_node));
        int cls = ResolveType(text, info_, cls_);
        int id = Occur(name_node);
        if (cls >= 0) {
          index_.occurrences[id].symbols.push_back(cls);
          for (int c : ByArguments(Constructors(cls, argc), arguments)) {
            index_.occurrences[id].symbols.push_back(c);
          }
        }
        index_.occurrences[id].argc = argc;
      } else {
        Visit(type_node);
      }
      TSNode body = FindChild(node, "class_body");
      if (!ts_node_is_null(body)) {
        auto it = anonymous_.find(Key(file_, ts_node_start_byte(node)));
        VisitClassBody(body, it == anonymous_.end() ? cls_ : it->second);
      }
      return;
    }
    if (is("explicit_constructor_invocation")) {
      TSNode ctor = Field(node, "constructor");
      TSNode arguments = Field(node, "arguments");
      int argc = CountArguments(arguments);
      int target = Is(ctor, "super") ? FirstSuper(cls_) : cls_;
      if (!ts_node_is_null(ctor)) {
        int id = Occur(ctor);
        for (int c : ByArguments(Constructors(target, argc), arguments)) {
          index_.occurrences[id].symbols.push_back(c);
        }
        index_.occurrences[id].argc = argc;
      }
      for (TSNode child : NamedChildren(node)) {
        if (!ts_node_eq(child, ctor)) Visit(child);
      }
      return;
    }
    if (is("enum_constant")) {
      TSNode name = Field(node, "name");
      OccurDeclaration(name);
      TSNode arguments = Field(node, "arguments");
      int argc = CountArguments(arguments);
      std::vector<int> ctors = ByArguments(Constructors(cls_, argc), arguments);
      if (!ctors.empty()) {
        int id = Occur(name);
        index_.occurrences[id].symbols = ctors;
        index_.occurrences[id].argc = argc;
      }
      if (!ts_node_is_null(arguments)) Visit(arguments);
      TSNode body = Field(node, "body");
      if (!ts_node_is_null(body)) {
        auto it = anonymous_.find(Key(file_, ts_node_start_byte(body)));
        VisitClassBody(body, it == anonymous_.end() ? cls_ : it->second);
      }
      return;
    }
    if (is("method_reference")) {
      std::vector<TSNode> parts = NamedChildren(node);
      if (parts.empty()) return;
      Visit(parts[0]);
      TSNode last = parts.back();
      if (parts.size() < 2 || !Is(last, "identifier")) return;
      TypeRef receiver = TypeOf(parts[0]);
      if (Is(parts[0], "type_identifier") ||
          Is(parts[0], "scoped_type_identifier") ||
          Is(parts[0], "generic_type")) {
        int cls = ResolveType(BaseTypeName(Text(parts[0])), info_, cls_);
        receiver = cls >= 0 ? TypeRef::ClassRef(cls) : TypeRef::External();
      }
      int id = Occur(last);
      index_.occurrences[id].is_member = true;
      if (receiver.kind == TypeRef::kInstance ||
          receiver.kind == TypeRef::kClassRef) {
        bool external = false;
        std::vector<int> methods =
            FindMethods(receiver.cls, std::string(Text(last)), -1, &external);
        index_.occurrences[id].symbols = methods;
        if (methods.empty() && !external)
          index_.occurrences[id].unknown_receiver = true;
      } else if (receiver.kind == TypeRef::kUnknown) {
        index_.occurrences[id].unknown_receiver = true;
      }
      return;
    }
    if (is("marker_annotation") || is("annotation")) {
      Visit(Field(node, "name"));
      TSNode arguments = Field(node, "arguments");
      if (!ts_node_is_null(arguments)) {
        for (TSNode child : NamedChildren(arguments)) {
          if (Is(child, "element_value_pair")) {
            Visit(Field(child, "value"));
          } else {
            Visit(child);
          }
        }
      }
      return;
    }
    if (is("labeled_statement")) {
      for (TSNode child : NamedChildren(node)) {
        if (!Is(child, "identifier")) Visit(child);
      }
      return;
    }
    if (is("break_statement") || is("continue_statement")) return;
    if (is("scoped_type_identifier") || is("scoped_identifier")) {
      // Outer.Inner as a type: each part that names a class.
      int cls = ResolveType(BaseTypeName(Text(node)), info_, cls_);
      std::vector<TSNode> parts = NamedChildren(node);
      if (!parts.empty()) Visit(parts[0]);
      if (parts.size() >= 2) {
        int id = Occur(parts.back());
        if (cls >= 0) index_.occurrences[id].symbols.push_back(cls);
      }
      return;
    }
    if (is("type_identifier")) {
      std::string name(Text(node));
      int id = Occur(node);
      int cls = ResolveType(name, info_, cls_);
      if (cls >= 0) index_.occurrences[id].symbols.push_back(cls);
      return;
    }
    if (is("identifier")) {
      std::string name(Text(node));
      int id = Occur(node);
      NameMeaning meaning = ResolveName(name);
      if (meaning.symbol >= 0)
        index_.occurrences[id].symbols.push_back(meaning.symbol);
      return;
    }
    VisitChildren(node);
  }

  void VisitCall(TSNode node) {
    TSNode object = Field(node, "object");
    if (!ts_node_is_null(object)) Visit(object);
    TSNode name = Field(node, "name");
    bool unknown = false;
    std::vector<int> methods = MethodsOfCall(node, &unknown);
    int id = Occur(name);
    Occurrence& o = index_.occurrences[id];
    o.is_member = true;
    o.argc = CountArguments(Field(node, "arguments"));
    o.symbols = methods;
    o.unknown_receiver = methods.empty() && unknown;
    for (TSNode child : NamedChildren(node)) {
      if (!ts_node_eq(child, object) && !ts_node_eq(child, name)) Visit(child);
    }
  }

  void VisitImport(TSNode node) {
    bool is_static = false, wildcard = false;
    TSNode name{};
    for (uint32_t i = 0; i < ts_node_child_count(node); ++i) {
      TSNode part = ts_node_child(node, i);
      if (Is(part, "static")) is_static = true;
      if (Is(part, "asterisk")) wildcard = true;
      if (Is(part, "scoped_identifier")) name = part;
    }
    if (ts_node_is_null(name)) return;
    TSNode scope = Field(name, "scope");
    TSNode last = Field(name, "name");
    // The class named by the scope of a static or wildcard import, or the
    // class itself.
    if (is_static && !wildcard) {
      int owner = ResolveTypeUncachedQualified(std::string(Text(scope)));
      if (owner >= 0) {
        Occurrence& o = index_.occurrences[Occur(Field(scope, "name"))];
        o.symbols.push_back(owner);
      }
      // The imported member's name: javac does not resolve it to the
      // member, so it is not a reference site.
      Occur(last);
      return;
    }
    int cls = ResolveTypeUncachedQualified(std::string(Text(name)));
    if (cls >= 0) index_.occurrences[Occur(last)].symbols.push_back(cls);
    // a.b.Outer.Inner: Outer is named too.
    for (TSNode part = scope; Is(part, "scoped_identifier");
         part = Field(part, "scope")) {
      int outer = ResolveTypeUncachedQualified(std::string(Text(part)));
      if (outer >= 0) {
        index_.occurrences[Occur(Field(part, "name"))].symbols.push_back(outer);
      }
    }
  }

  Index& index_;
  const std::vector<ParsedFile>& files_;
  std::vector<FileInfo> infos_;
  std::unordered_map<std::string, int> class_by_qname_;
  std::unordered_map<std::string, std::vector<int>> classes_by_simple_;
  std::unordered_map<int, int> outer_of_;
  std::unordered_map<int, std::vector<DeclaredType>> super_texts_;
  std::unordered_map<int, DeclaredType> field_types_;
  std::unordered_map<int, std::vector<DeclaredType>> parameter_types_;
  std::unordered_map<uint64_t, int> declared_at_;
  std::unordered_map<uint64_t, int> anonymous_;
  std::unordered_map<int, std::vector<int>> record_components_;
  std::unordered_map<int, std::vector<int>> lombok_fields_;
  std::unordered_set<int> lombok_getter_, lombok_setter_;
  std::unordered_map<std::string, int> type_cache_;

  // The walk's state.
  int info_ = -1;
  int file_ = -1;
  const std::string* source_ = nullptr;
  int cls_ = -1;
  int enclosing_ = -1;
  std::vector<std::unordered_map<std::string, Var>> scopes_;
};

}  // namespace

void BindJava(Index& index, const std::vector<ParsedFile>& files) {
  JavaBinder(index, files).Run();
}

}  // namespace garuda::knowledge
