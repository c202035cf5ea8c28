// Java binder: the walk over every node, resolving each identifier.
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

void JavaBinder::Visit(TSNode node) {
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
    auto it =
        declared_at_.find(Key(file_, ts_node_start_byte(Field(node, "name"))));
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
    // `<A extends Appendable> void f(A a)`: a value of type A has the
    // members of its bound (Object's when it has none), never others.
    std::unordered_map<std::string, std::string> bounds;
    for (TSNode parameter : NamedChildren(Field(node, "type_parameters"))) {
      if (!Is(parameter, "type_parameter")) continue;
      std::string bound;
      std::string parameter_name;
      for (TSNode part : NamedChildren(parameter)) {
        if (Is(part, "type_identifier") && parameter_name.empty()) {
          parameter_name = std::string(Text(part));
        } else if (Is(part, "type_bound")) {
          std::vector<TSNode> types = NamedChildren(part);
          if (!types.empty()) bound = BaseTypeName(Text(types[0]));
        }
      }
      if (!parameter_name.empty()) bounds[parameter_name] = bound;
    }
    type_bounds_.push_back(std::move(bounds));
    for (TSNode child : NamedChildren(node)) {
      if (ts_node_eq(child, name)) continue;
      if (Is(child, "formal_parameters")) {
        VisitParameters(child);
      } else {
        Visit(child);
      }
    }
    type_bounds_.pop_back();
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
    if (Is(field, "this")) return;  // Outer.this names no member
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
        // `new Foo() { ... }` runs the anonymous class's own constructor,
        // whose super(...) the compiler writes: as with any implicit
        // super() call, not a use of Foo's constructor (javac's element for
        // the creation is the anonymous constructor). Foo the type is used.
        if (ts_node_is_null(FindChild(node, "class_body"))) {
          for (int c : ByArguments(Constructors(cls, argc), arguments)) {
            index_.occurrences[id].symbols.push_back(c);
          }
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

void JavaBinder::VisitCall(TSNode node) {
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

void JavaBinder::VisitImport(TSNode node) {
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

}  // namespace garuda::knowledge::java
