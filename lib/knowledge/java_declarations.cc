// Java binder: declarations (classes, members, supertypes, overloads).
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

void JavaBinder::DeclareFile(TSNode root) {
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
      std::string last = dot == std::string::npos ? name : name.substr(dot + 1);
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

bool JavaBinder::IsClassNode(TSNode node) {
  return Is(node, "class_declaration") || Is(node, "interface_declaration") ||
         Is(node, "enum_declaration") || Is(node, "record_declaration") ||
         Is(node, "annotation_type_declaration");
}

void JavaBinder::DeclareIn(TSNode node, int outer, const std::string& prefix) {
  for (TSNode child : NamedChildren(node)) {
    if (IsClassNode(child)) {
      DeclareClass(child, outer, prefix);
    } else if (Is(child, "object_creation_expression") &&
               !ts_node_is_null(FindChild(child, "class_body"))) {
      int anon =
          AddSymbol(index_, SymbolKind::kClass, "", infos_[info_].file, child);
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

TSNode JavaBinder::FindChild(TSNode node, const char* type) {
  for (TSNode child : NamedChildren(node)) {
    if (Is(child, type)) return child;
  }
  return TSNode{};
}

bool JavaBinder::HasModifier(TSNode declaration, absl::string_view word) {
  TSNode modifiers = FindChild(declaration, "modifiers");
  if (ts_node_is_null(modifiers)) return false;
  for (uint32_t i = 0; i < ts_node_child_count(modifiers); ++i) {
    if (ts_node_type(ts_node_child(modifiers, i)) == word) return true;
  }
  return false;
}

std::vector<std::string> JavaBinder::Annotations(TSNode declaration) const {
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

int JavaBinder::Declare(SymbolKind kind, TSNode name_node, int owner) {
  int file = infos_[info_].file;
  int id = AddSymbol(index_, kind, Text(name_node), file, name_node);
  declared_at_[Key(file, ts_node_start_byte(name_node))] = id;
  if (owner >= 0) {
    index_.symbols[id].owner_class = owner;
    index_.symbols[owner].members[index_.symbols[id].name].push_back(id);
  }
  return id;
}

void JavaBinder::SetArity(int symbol, TSNode parameters) {
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

// The JDK's I/O, text and collection types that project APIs overload on
// most (copy(Reader, Writer) beside copy(Reader, OutputStream)), each with
// every one of its supertypes (Object aside), as java.base declares them.
static const std::vector<std::string>* JdkSupertypes(const std::string& name) {
  static const auto* kTable = new std::unordered_map<std::string,
                                                     std::vector<std::string>>{
      {"InputStream", {"Closeable", "AutoCloseable"}},
      {"OutputStream", {"Closeable", "AutoCloseable", "Flushable"}},
      {"Reader", {"Readable", "Closeable", "AutoCloseable"}},
      {"Writer", {"Appendable", "Closeable", "Flushable", "AutoCloseable"}},
      {"FileInputStream", {"InputStream", "Closeable", "AutoCloseable"}},
      {"ByteArrayInputStream", {"InputStream", "Closeable", "AutoCloseable"}},
      {"FilterInputStream", {"InputStream", "Closeable", "AutoCloseable"}},
      {"BufferedInputStream",
       {"FilterInputStream", "InputStream", "Closeable", "AutoCloseable"}},
      {"FileOutputStream",
       {"OutputStream", "Closeable", "AutoCloseable", "Flushable"}},
      {"ByteArrayOutputStream",
       {"OutputStream", "Closeable", "AutoCloseable", "Flushable"}},
      {"FilterOutputStream",
       {"OutputStream", "Closeable", "AutoCloseable", "Flushable"}},
      {"BufferedOutputStream",
       {"FilterOutputStream", "OutputStream", "Closeable", "AutoCloseable",
        "Flushable"}},
      {"PrintStream",
       {"FilterOutputStream", "OutputStream", "Appendable", "Closeable",
        "AutoCloseable", "Flushable"}},
      {"InputStreamReader",
       {"Reader", "Readable", "Closeable", "AutoCloseable"}},
      {"FileReader",
       {"InputStreamReader", "Reader", "Readable", "Closeable",
        "AutoCloseable"}},
      {"BufferedReader", {"Reader", "Readable", "Closeable", "AutoCloseable"}},
      {"StringReader", {"Reader", "Readable", "Closeable", "AutoCloseable"}},
      {"CharArrayReader", {"Reader", "Readable", "Closeable", "AutoCloseable"}},
      {"OutputStreamWriter",
       {"Writer", "Appendable", "Closeable", "Flushable", "AutoCloseable"}},
      {"FileWriter",
       {"OutputStreamWriter", "Writer", "Appendable", "Closeable", "Flushable",
        "AutoCloseable"}},
      {"BufferedWriter",
       {"Writer", "Appendable", "Closeable", "Flushable", "AutoCloseable"}},
      {"StringWriter",
       {"Writer", "Appendable", "Closeable", "Flushable", "AutoCloseable"}},
      {"PrintWriter",
       {"Writer", "Appendable", "Closeable", "Flushable", "AutoCloseable"}},
      {"CharArrayWriter",
       {"Writer", "Appendable", "Closeable", "Flushable", "AutoCloseable"}},
      {"File", {"Serializable", "Comparable"}},
      {"Path", {"Comparable", "Iterable", "Watchable"}},
      {"URL", {"Serializable"}},
      {"URI", {"Comparable", "Serializable"}},
      {"Charset", {"Comparable"}},
      {"Closeable", {"AutoCloseable"}},
      {"Flushable", {}},
      {"AutoCloseable", {}},
      {"Appendable", {}},
      {"Readable", {}},
      {"CharSequence", {}},
      {"Iterable", {}},
      {"Iterator", {}},
      {"Collection", {"Iterable"}},
      {"List", {"Collection", "Iterable", "SequencedCollection"}},
      {"Set", {"Collection", "Iterable"}},
      {"Map", {}},
  };
  auto it = kTable->find(name);
  return it == kTable->end() ? nullptr : &it->second;
}

bool JavaBinder::Compatible(const TypeRef& arg, const DeclaredType& param) {
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
  // Final JDK classes besides those above: no project class is one.
  static const std::unordered_set<std::string> kFinalJdk = {
      "Class",     "URL",       "URI",           "Instant",       "Duration",
      "UUID",      "Optional",  "Pattern",       "Matcher",       "Locale",
      "LocalDate", "LocalTime", "LocalDateTime", "ZonedDateTime", "Files",
      "Paths",     "Objects"};
  const std::string& text = param.text;
  if (arg.kind == TypeRef::kUnknown || text.empty() || text == "Object" ||
      LooksLikeTypeParameter(text)) {
    return true;
  }
  int param_cls = ResolveType(text, param.info, param.cls);
  if (arg.kind == TypeRef::kInstance) {
    // String, the boxes and the primitives are final: no project class is
    // one of them; any other library type may be a supertype we cannot see.
    if (param_cls < 0) return !kExact.count(text) && !kFinalJdk.count(text);
    std::vector<int> queue = {arg.cls};
    std::unordered_set<int> seen;
    for (size_t i = 0; i < queue.size(); ++i) {
      if (queue[i] == param_cls) return true;
      if (!seen.insert(queue[i]).second) continue;
      for (int super : index_.symbols[queue[i]].supers) queue.push_back(super);
    }
    return false;
  }
  if (arg.kind != TypeRef::kExternal || arg.name.empty()) return true;
  const std::string& name = arg.name;
  // null goes to any reference type, never to a primitive (boolean too).
  if (name == "null") return kWidening.count(text) == 0 && text != "boolean";
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
  // A JDK class whose supertypes are all listed below goes only to them:
  // an OutputStreamWriter is a Writer, never an OutputStream.
  const std::vector<std::string>* supers = JdkSupertypes(name);
  if (supers != nullptr && JdkSupertypes(text) != nullptr) {
    return std::find(supers->begin(), supers->end(), text) != supers->end();
  }
  // A final parameter type (String, a primitive, a box) takes only what
  // the rules above allow; a final argument type goes only to its few
  // supertypes; anything else may be a supertype we cannot see.
  if (kExact.count(text)) return false;
  if (kExact.count(name)) {
    return text == "Comparable" || text == "Serializable" ||
           text == "Constable" || (name == "String" && text == "CharSequence");
  }
  return true;
}

bool JavaBinder::ArgumentsFit(int method, const std::vector<TypeRef>& args) {
  auto it = parameter_types_.find(method);
  if (it == parameter_types_.end()) return true;
  const std::vector<DeclaredType>& params = it->second;
  for (size_t i = 0; i < args.size() && i < params.size(); ++i) {
    if (!Compatible(args[i], params[i])) return false;
  }
  return true;
}

std::vector<TypeRef> JavaBinder::ArgumentTypes(TSNode arguments) {
  std::vector<TypeRef> types;
  for (TSNode a : NamedChildren(arguments)) {
    if (Is(a, "line_comment") || Is(a, "block_comment")) continue;
    types.push_back(TypeOf(a));
  }
  return types;
}

bool JavaBinder::Exact(const TypeRef& arg, const DeclaredType& param) {
  if (arg.kind == TypeRef::kInstance) {
    return ResolveType(param.text, param.info, param.cls) == arg.cls;
  }
  return arg.kind == TypeRef::kExternal && !arg.name.empty() &&
         arg.name == param.text;
}

std::vector<int> JavaBinder::ByArguments(std::vector<int> candidates,
                                         TSNode arguments) {
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

void JavaBinder::DeclareClass(TSNode node, int outer,
                              const std::string& prefix) {
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
      field_types_[field] = {BaseTypeName(Text(Field(p, "type"))), info_, cls};
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

void JavaBinder::AddAccessor(int cls, int field, const std::string& name,
                             int arity) {
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

void JavaBinder::DeclareMembers(TSNode body, int cls,
                                const std::string& qualified) {
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
      field_types_[m] = {BaseTypeName(Text(Field(member, "type"))), info_, cls};
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
        int anon = AddSymbol(index_, SymbolKind::kClass, "", infos_[info_].file,
                             member);
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
      field_types_[m] = {BaseTypeName(Text(Field(member, "type"))), info_, cls};
    } else {
      DeclareIn(member, cls, qualified);
    }
  }
}

}  // namespace garuda::knowledge::java
