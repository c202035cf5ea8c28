// Internal to lib/knowledge: the Java binder, one class whose parts live
// in java_binder.cc and java_*.cc, along the section markers.
#ifndef GARUDA_LIB_KNOWLEDGE_JAVA_BINDER_H_
#define GARUDA_LIB_KNOWLEDGE_JAVA_BINDER_H_

#include <algorithm>
#include <functional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "lib/knowledge/binder.h"

namespace garuda::knowledge::java {

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

inline int CountArguments(TSNode arguments) {
  if (ts_node_is_null(arguments)) return 0;
  int count = 0;
  for (TSNode child : NamedChildren(arguments)) {
    if (!Is(child, "line_comment") && !Is(child, "block_comment")) ++count;
  }
  return count;
}

// "Foo<Bar>[]" -> "Foo"; "a.b.Foo<X>" -> "a.b.Foo"; "@Ann Foo" -> "Foo".
inline std::string BaseTypeName(absl::string_view text) {
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

  void Run();

 private:
  absl::string_view Text(TSNode node) const { return NodeText(node, *source_); }

  // ---- Declarations -------------------------------------------------------

  void DeclareFile(TSNode root);

  static bool IsClassNode(TSNode node);

  // Finds class declarations anywhere under `node` (also local and
  // anonymous classes), with `outer` the nearest enclosing class.
  void DeclareIn(TSNode node, int outer, const std::string& prefix);

  static TSNode FindChild(TSNode node, const char* type);

  static bool HasModifier(TSNode declaration, absl::string_view word);

  std::vector<std::string> Annotations(TSNode declaration) const;

  int Declare(SymbolKind kind, TSNode name_node, int owner);

  void SetArity(int symbol, TSNode parameters);

  // Whether an argument of type `arg` can be passed for a parameter
  // declared as `param`; true when unsure.
  bool Compatible(const TypeRef& arg, const DeclaredType& param);

  bool ArgumentsFit(int method, const std::vector<TypeRef>& args);

  std::vector<TypeRef> ArgumentTypes(TSNode arguments);

  // An argument whose type is the parameter's exactly (the same name, the
  // same project class): javac prefers the overload with the most of them.
  bool Exact(const TypeRef& arg, const DeclaredType& param);

  // Of several overloads, those the argument types allow (all when none
  // or the types are unknown), the most exactly matching first.
  std::vector<int> ByArguments(std::vector<int> candidates, TSNode arguments);

  void DeclareClass(TSNode node, int outer, const std::string& prefix);

  void AddAccessor(int cls, int field, const std::string& name, int arity);

  void DeclareMembers(TSNode body, int cls, const std::string& qualified);

  // ---- Types --------------------------------------------------------------

  int NestedClass(int cls, const std::string& name, int depth = 0);

  // The project class that `text` names in the context of file `info` and
  // class `cls`, else -1.
  int ResolveType(const std::string& text, int info, int cls);

  int ResolveTypeUncached(const std::string& text, int info, int cls);

  int ResolveSimpleType(const std::string& name, int info, int cls);

  int ResolveTypeUncachedQualified(const std::string& qualified);

  static bool LooksLikeTypeParameter(const std::string& name);

  TypeRef TypeOfText(const std::string& text, int info, int cls);

  TypeRef TypeOfMember(int symbol);

  // ---- Members ------------------------------------------------------------

  // Calls `visit(class, its symbol)` for `cls` and its project supertypes,
  // breadth first, each once, until it returns true; sets *external when
  // one of them has a library supertype (a member may live there).
  template <typename Visit>
  void WalkSupertypes(int cls, bool* external, Visit visit) {
    std::unordered_set<int> seen;
    std::vector<int> queue = {cls};
    for (size_t i = 0; i < queue.size(); ++i) {
      int c = queue[i];
      if (c < 0 || !seen.insert(c).second) continue;
      const Symbol& symbol = index_.symbols[c];
      if (symbol.has_external_super) *external = true;
      if (visit(c, symbol)) return;
      for (int super : symbol.supers) queue.push_back(super);
    }
  }

  // Methods named `name` that a call with `argc` arguments on `cls` means:
  // the first class up the hierarchy that declares a compatible one.
  std::vector<int> FindMethods(int cls, const std::string& name, int argc,
                               bool* external);

  int FindField(int cls, const std::string& name, bool* external);

  std::vector<int> Constructors(int cls, int argc);

  int Outer(int cls) const;

  int FirstSuper(int cls) const;

  // ---- Resolution ---------------------------------------------------------

  int Occur(TSNode node);

  void OccurDeclaration(TSNode name_node);

  Var* Lookup(const std::string& name);

  void DeclareLocal(TSNode name_node, TypeRef type, SymbolKind kind);

  // What a plain name in an expression means.
  struct NameMeaning {
    int symbol = -1;
    TypeRef type;
  };

  NameMeaning ResolveName(const std::string& name);

  // The static type of an expression, as far as the syntax gives it.
  TypeRef TypeOf(TSNode node);

  // The methods a call means. *unknown is set when the receiver's type is
  // unknown (then the result is empty).
  // The type of a call that resolves to no project method, where the
  // library's rules tell it: Object's toString/hashCode/equals, and the
  // methods of java.lang's final classes (String, StringBuilder, the boxes,
  // Math), which never return a project type. Else unknown.
  TypeRef LibraryCallType(TSNode node);

  std::vector<int> MethodsOfCall(TSNode node, bool* unknown);

  std::vector<int> MethodsOfCallByArity(TSNode node, bool* unknown);

  void PushScope() { scopes_.emplace_back(); }
  void PopScope() { scopes_.pop_back(); }

  void VisitChildren(TSNode node);

  void VisitClassBody(TSNode body, int cls);

  void VisitParameters(TSNode parameters);

  void Visit(TSNode node);

  void VisitCall(TSNode node);

  void VisitImport(TSNode node);

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
  // The type parameters of the methods being walked, innermost last: name
  // -> its bound's type name ("" for none).
  std::vector<std::unordered_map<std::string, std::string>> type_bounds_;
};

}  // namespace garuda::knowledge::java

#endif  // GARUDA_LIB_KNOWLEDGE_JAVA_BINDER_H_
