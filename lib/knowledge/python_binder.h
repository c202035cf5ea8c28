// Internal to lib/knowledge: the Python binder, one class whose parts live
// in python_binder.cc and python_*.cc, along the section markers.
#ifndef GARUDA_LIB_KNOWLEDGE_PYTHON_BINDER_H_
#define GARUDA_LIB_KNOWLEDGE_PYTHON_BINDER_H_

#include <algorithm>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "lib/knowledge/binder.h"

namespace garuda::knowledge::python {

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
  // `with value as x`: x is what value's __enter__ returns (1), or its
  // __aenter__'s for `async with` (2).
  int entered = 0;
};

class PythonBinder {
 public:
  PythonBinder(Index& index, const std::vector<ParsedFile>& files)
      : index_(index), files_(files) {}
  ~PythonBinder() {
    for (TSTree* tree : string_trees_) ts_tree_delete(tree);
  }
  PythonBinder(const PythonBinder&) = delete;
  PythonBinder& operator=(const PythonBinder&) = delete;

 private:
  absl::string_view Text(TSNode node) const { return NodeText(node, *source_); }

  void Enter(int module);

  void AddModule(int i);

  // The module that `dotted` names from the importing module, else -1.
  int FindModule(const std::string& dotted, int from) const;

  // "from ..a import b" in package p.q.r -> absolute "p.a".
  std::string AbsoluteModule(TSNode module_name, int module);

  // ---- Collect: the bindings of each scope --------------------------------

  int NewScope(ScopeKind kind, int parent);

  SymbolKind KindFor(int scope, SymbolKind wanted) const;

  // Binds `name_node` in `scope` (or the module, for a global).
  int Bind(int scope, TSNode name_node, SymbolKind kind);

  void AddBinding(int symbol, TSNode value, int scope, bool annotation,
                  bool element = false, int entered = 0);

  // Binds the names of an assignment target.
  void BindTarget(TSNode target, int scope, TSNode value, bool element = false,
                  int value_scope = -1, int entered = 0);

  void CollectBlock(TSNode node, int scope);

  void Collect(TSNode node, int scope);

  void CollectSubexpressions(TSNode node, int scope);

  void CollectParameters(TSNode parameters, int scope, int outer);

  void CollectFunction(TSNode node, int scope, TSNode decorated);

  void PreCollectDeclarations(TSNode node, int scope);

  void CollectClass(TSNode node, int scope);

  // ---- Types --------------------------------------------------------------

  // The symbol a name means in `scope` (LEGB), following import aliases;
  // sets *type when the name denotes a class, module or known instance.
  int ResolveName(const std::string& name, int scope, int depth = 0);

  static std::string Join(const std::string& package, const std::string& name);

  // An import alias's final symbol; the alias itself when its target is
  // outside the project. With `stop_at_rename`, the first renaming import
  // met after `symbol` (the name a reference spells) instead.
  int FollowAlias(int symbol, int depth = 0, bool stop_at_rename = false);

  // What attribute `name` of `module` means, as Python resolves it (from
  // module `from`): a name the module binds, followed through its imports
  // (`importing`, the import being resolved, is skipped: `from . import x`
  // in a package's __init__.py is the submodule x), else its submodule,
  // else a name one of its star imports brings.
  int ModuleMember(int module, const std::string& name, int from, int importing,
                   int depth, bool stop_at_rename);

  // Finds `name` in `cls` or its bases (depth first, as a simple MRO).
  int FindMember(int cls, const std::string& name, bool* external,
                 int depth = 0);

  TypeRef TypeOfSymbol(int symbol);

  // An annotation decides; otherwise the values that have a known type
  // must agree (None and unknown values do not disagree, as in pyright's
  // declared type, whose known part still resolves members).
  TypeRef Infer(const std::vector<Binding>& bindings);

  static TypeRef Merge(TypeRef a, TypeRef b);

  TypeRef TypeOfAnnotation(TSNode node, int scope);

  // A bare `Final` or `ClassVar`: it says nothing of the type, which is the
  // assigned value's.
  bool IsBareQualifier(const Binding& binding) const;

  // What `with <a value of type t> as x` binds x to: the return of the
  // class's __enter__ (or __aenter__), or, for a generator function used as
  // a context manager (`@contextmanager`), what it yields.
  TypeRef Entered(TypeRef t, bool async);

  // Whether `cls` is `base` or has it among its project supertypes.
  bool IsSubclass(int cls, int base, int depth = 0) const;

  // A string in an annotation ("Environment", "t.Optional[Foo]") is a
  // forward reference, an expression as pyright reads it: the string's
  // text parsed on its own (a tree over the same file text, kept while the
  // binder lives), or a null node when it is not one plain string.
  TSNode ParseAnnotationString(TSNode string);

  // `cast(...)` imported from typing, or `typing.cast` / `t.cast` through an
  // import of the typing module.
  bool IsTypingCast(TSNode function, int scope);

  // Evaluates a binding in its own file (bindings of other modules are
  // typed lazily, from anywhere).
  TypeRef Evaluate(const Binding& binding);

  TypeRef TypeOf(TSNode node, int scope);

  int CalleeSymbol(TSNode function, int scope);

  TypeRef ReturnType(int function);

  // The symbol `name` means on a receiver of type `object`; -1 when not a
  // project symbol or unknown.
  int MemberOf(TypeRef object, const std::string& name, bool* unknown = nullptr,
               bool stop_at_rename = false);

  // ---- Visit: every occurrence --------------------------------------------

  int Occur(TSNode node);

  void OccurName(TSNode node, int scope);

  void VisitBlock(TSNode node, int scope);

  int InnerScope(TSNode node, int fallback);

  void Visit(TSNode node, int scope);

  void VisitParameters(TSNode parameters, int inner, int outer);

 public:
  void Prepare();

  void RunAll();

 private:
  Index& index_;
  const std::vector<ParsedFile>& files_;
  std::vector<Module> modules_;
  std::vector<Scope> scopes_;
  std::unordered_map<std::string, std::vector<int>> modules_by_suffix_;
  // Folders with an __init__.py(i): no import path starts inside them.
  std::unordered_set<std::string> package_folders_;
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
  // Visiting an annotation: its strings are forward references.
  bool in_annotation_ = false;
  std::vector<TSTree*> string_trees_;
  std::unordered_map<uint64_t, TSNode> parsed_strings_;
};

}  // namespace garuda::knowledge::python

#endif  // GARUDA_LIB_KNOWLEDGE_PYTHON_BINDER_H_
