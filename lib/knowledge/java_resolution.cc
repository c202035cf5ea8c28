// Java binder: resolution (scopes, names, receiver types) and the walk.
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

int JavaBinder::Occur(TSNode node) {
  int id = AddOccurrence(index_, file_, node, Text(node));
  index_.occurrences[id].enclosing = enclosing_;
  return id;
}

void JavaBinder::OccurDeclaration(TSNode name_node) {
  if (ts_node_is_null(name_node)) return;
  auto it = declared_at_.find(Key(file_, ts_node_start_byte(name_node)));
  int id = Occur(name_node);
  index_.occurrences[id].is_declaration = true;
  if (it != declared_at_.end()) {
    index_.occurrences[id].symbols.push_back(it->second);
  }
}

Var* JavaBinder::Lookup(const std::string& name) {
  for (auto scope = scopes_.rbegin(); scope != scopes_.rend(); ++scope) {
    auto it = scope->find(name);
    if (it != scope->end()) return &it->second;
  }
  return nullptr;
}

void JavaBinder::DeclareLocal(TSNode name_node, TypeRef type, SymbolKind kind) {
  if (ts_node_is_null(name_node) || scopes_.empty()) return;
  int symbol = AddSymbol(index_, kind, Text(name_node), file_, name_node);
  int id = Occur(name_node);
  index_.occurrences[id].is_declaration = true;
  index_.occurrences[id].symbols.push_back(symbol);
  scopes_.back()[std::string(Text(name_node))] = {symbol, type};
}

JavaBinder::NameMeaning JavaBinder::ResolveName(const std::string& name) {
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
  // A field that a static import (single, then wildcard) brings in.
  const FileInfo& info = infos_[info_];
  std::vector<std::string> owners;
  auto statics = info.static_imports.find(name);
  if (statics != info.static_imports.end()) owners.push_back(statics->second);
  owners.insert(owners.end(), info.static_wildcards.begin(),
                info.static_wildcards.end());
  for (const std::string& qualified : owners) {
    int owner = ResolveTypeUncachedQualified(qualified);
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

TypeRef JavaBinder::TypeOf(TSNode node) {
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
  if (strcmp(type, "string_literal") == 0 || strcmp(type, "text_block") == 0) {
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
        !text.empty() && (text.back() == 'f' || text.back() == 'F') ? "float"
                                                                    : "double");
  }
  if (strcmp(type, "true") == 0 || strcmp(type, "false") == 0) {
    return TypeRef::External("boolean");
  }
  if (strcmp(type, "character_literal") == 0) return TypeRef::External("char");
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
  // `Foo.class` is a Class (final: no project class is one).
  if (strcmp(type, "class_literal") == 0) return TypeRef::External("Class");
  // `c ? a : b` where both branches have one type (`x ? "!" : "?"`).
  if (strcmp(type, "ternary_expression") == 0) {
    TypeRef a = TypeOf(Field(node, "consequence"));
    TypeRef b = TypeOf(Field(node, "alternative"));
    if (a.kind == b.kind && a.cls == b.cls && a.name == b.name) return a;
    return TypeRef::Unknown();
  }
  if (strcmp(type, "field_access") == 0) {
    TypeRef object = TypeOf(Field(node, "object"));
    // `Outer.this`: the enclosing instance of class Outer.
    if (Is(Field(node, "field"), "this")) {
      return object.kind == TypeRef::kClassRef ? TypeRef::Instance(object.cls)
                                               : TypeRef::Unknown();
    }
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
    if (methods.empty()) return LibraryCallType(node);
    return TypeOfMember(methods[0]);
  }
  return TypeRef::Unknown();
}

TypeRef JavaBinder::LibraryCallType(TSNode node) {
  // java.lang's final, non-generic classes: their methods never return a
  // project type.
  static const std::unordered_set<std::string> kFinalLibrary = {
      "String",  "StringBuilder", "StringBuffer", "Integer", "Long",
      "Boolean", "Character",     "Double",       "Float",   "Short",
      "Byte",    "Math",          "StrictMath"};
  static const std::unordered_set<std::string> kSelf = {
      "append", "insert", "reverse", "delete", "deleteCharAt", "replace"};
  static const std::unordered_set<std::string> kStringResults = {
      "substring",   "trim",        "strip",   "stripLeading", "stripTrailing",
      "toLowerCase", "toUpperCase", "replace", "replaceAll",   "replaceFirst",
      "concat",      "repeat",      "intern",  "formatted",    "valueOf",
      "format",      "join"};
  std::string name(Text(Field(node, "name")));
  int argc = CountArguments(Field(node, "arguments"));
  // Object's own methods, whatever the receiver (they are final in
  // meaning: every override keeps the type).
  if (name == "toString" && argc == 0) return TypeRef::External("String");
  if (name == "hashCode" && argc == 0) return TypeRef::External("int");
  if (name == "equals" && argc == 1) return TypeRef::External("boolean");
  TSNode object = Field(node, "object");
  if (ts_node_is_null(object)) return TypeRef::Unknown();
  TypeRef receiver = TypeOf(object);
  // A few JDK calls whose result type decides a project's overloads
  // (writeTo(directory.toPath()) is writeTo(Path), not writeTo(File)).
  struct JdkCall {
    const char* receiver;  // a type, or a class of static methods
    const char* method;
    const char* result;
  };
  static const JdkCall kJdkCalls[] = {{"File", "toPath", "Path"},
                                      {"Path", "toFile", "File"},
                                      {"Paths", "get", "Path"},
                                      {"Path", "of", "Path"},
                                      {"BigDecimal", "valueOf", "BigDecimal"},
                                      {"BigInteger", "valueOf", "BigInteger"},
                                      {"Path", "resolve", "Path"},
                                      {"Path", "getFileName", "Path"},
                                      {"File", "getParentFile", "File"},
                                      {"File", "getName", "String"},
                                      {"Path", "toUri", "URI"},
                                      {"File", "toURI", "URI"},
                                      {"Instant", "ofEpochMilli", "Instant"},
                                      {"Iterable", "iterator", "Iterator"},
                                      {"Collection", "iterator", "Iterator"},
                                      {"List", "iterator", "Iterator"},
                                      {"Set", "iterator", "Iterator"}};
  std::string receiver_name = receiver.name;
  if (receiver.kind == TypeRef::kExternal && receiver_name.empty() &&
      Is(object, "identifier") &&
      ResolveName(std::string(Text(object))).symbol < 0) {
    receiver_name = std::string(Text(object));  // a static call
  }
  if (receiver.kind == TypeRef::kExternal) {
    for (const JdkCall& call : kJdkCalls) {
      if (receiver_name == call.receiver && name == call.method) {
        return TypeRef::External(call.result);
      }
    }
  }
  std::string library;
  if (receiver.kind == TypeRef::kExternal &&
      kFinalLibrary.count(receiver.name)) {
    library = receiver.name;
  } else if (receiver.kind == TypeRef::kExternal && receiver.name.empty() &&
             Is(object, "identifier") &&
             kFinalLibrary.count(std::string(Text(object))) &&
             ResolveName(std::string(Text(object))).symbol < 0) {
    library = std::string(Text(object));  // a static call: String.format(...)
  }
  if (library.empty()) return TypeRef::Unknown();
  if ((library == "StringBuilder" || library == "StringBuffer") &&
      kSelf.count(name)) {
    return TypeRef::External(library);
  }
  if (library == "String" && kStringResults.count(name)) {
    return TypeRef::External("String");
  }
  // The primitive results of String's and the builders' methods, which
  // decide between a project's char, int and boolean overloads.
  static const std::unordered_map<std::string, std::string> kPrimitive = {
      {"charAt", "char"},      {"length", "int"},
      {"indexOf", "int"},      {"lastIndexOf", "int"},
      {"compareTo", "int"},    {"codePointAt", "int"},
      {"isEmpty", "boolean"},  {"isBlank", "boolean"},
      {"contains", "boolean"}, {"startsWith", "boolean"},
      {"endsWith", "boolean"}, {"equalsIgnoreCase", "boolean"},
      {"matches", "boolean"}};
  bool text = library == "String" || library == "StringBuilder" ||
              library == "StringBuffer";
  auto primitive = kPrimitive.find(name);
  if (text && primitive != kPrimitive.end()) {
    return TypeRef::External(primitive->second);
  }
  return TypeRef::External();
}

std::vector<int> JavaBinder::MethodsOfCall(TSNode node, bool* unknown) {
  std::vector<int> methods = MethodsOfCallByArity(node, unknown);
  return ByArguments(std::move(methods), Field(node, "arguments"));
}

std::vector<int> JavaBinder::MethodsOfCallByArity(TSNode node, bool* unknown) {
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
    if (statics != info.static_imports.end()) owners.push_back(statics->second);
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
    std::vector<int> methods = FindMethods(receiver.cls, name, argc, &external);
    if (methods.empty() && !external && unknown != nullptr) *unknown = true;
    return methods;
  }
  if (receiver.kind == TypeRef::kUnknown && unknown != nullptr) *unknown = true;
  return {};
}

void JavaBinder::VisitChildren(TSNode node) {
  for (TSNode child : NamedChildren(node)) Visit(child);
}

void JavaBinder::VisitClassBody(TSNode body, int cls) {
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

void JavaBinder::VisitParameters(TSNode parameters) {
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

}  // namespace garuda::knowledge::java
