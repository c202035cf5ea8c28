// The code index of a project's Java and Python sources: declarations,
// classes with their supertypes and members, imports and aliases, local
// bindings, and every identifier occurrence outside comments and strings,
// each resolved to the declarations it can mean.
//
// Resolution is syntactic: scopes, imports and the receiver types that the
// source spells out (declared Java types, this/self, `x = Foo()`,
// `new Foo()`, `Class.m`). An occurrence whose receiver type is unknown
// keeps its name match and is marked so; the queries report it as
// search_based.
#ifndef GARUDA_LIB_KNOWLEDGE_INDEX_H_
#define GARUDA_LIB_KNOWLEDGE_INDEX_H_

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace garuda::knowledge {

enum class Language { kJava, kPython };

enum class SymbolKind {
  kClass,
  kMethod,
  kConstructor,
  kFunction,
  kField,
  kVariable,  // a module-level Python name
  kParameter,
  kLocal,
  kEnumConstant,
  kModule,
};

absl::string_view SymbolKindName(SymbolKind kind);

struct Symbol {
  int id = -1;
  SymbolKind kind = SymbolKind::kLocal;
  std::string name;
  int file = -1;
  int line = 0;    // 1-based
  int column = 0;  // 1-based byte column
  // The class that declares a member, else -1.
  int owner_class = -1;
  // Methods and functions: how many arguments a call may pass (Python
  // counts without self/cls). max_args < 0: any number (varargs).
  int min_args = 0;
  int max_args = 0;
  bool is_static = false;
  // Java methods: the parameters' type names ("Foo" for "a.Foo<T>[]"), so
  // that an override is told from an overload of the same arity.
  std::vector<std::string> parameter_types;
  // Classes: the resolved project supertypes, and whether some supertype is
  // outside the project (then a missing member may live there).
  std::vector<int> supers;
  bool has_external_super = false;
  std::unordered_map<std::string, std::vector<int>> members;
  // A Java accessor generated for a field (record component, Lombok):
  // references to the accessor are references to this field.
  int accessor_of = -1;
  // A Python name bound by an import (`from m import x`): a second name for
  // a declaration elsewhere, never the declaration a name means.
  bool is_import = false;
  // For callers: the span of the declaration (1-based lines).
  int end_line = 0;
};

struct Occurrence {
  int file = -1;
  int line = 0;    // 1-based
  int column = 0;  // 1-based byte column
  uint32_t start_byte = 0;
  uint32_t end_byte = 0;
  std::string name;
  // The declarations this occurrence means; more than one when an overload
  // or a constructor and its class are both meant.
  std::vector<int> symbols;
  // The name matched but the receiver's type is unknown: any member with
  // this name (and a compatible argument count) may be meant.
  bool unknown_receiver = false;
  // `obj.name` or `name(...)` as a member.
  bool is_member = false;
  // The occurrence declares (or, in Python, binds) the symbol.
  bool is_declaration = false;
  // The argument count of a call at this name, else -1.
  int argc = -1;
  // The innermost function, method or constructor that holds the
  // occurrence, else -1 (module or class body).
  int enclosing = -1;
};

struct SourceFile {
  std::string path;  // relative to the project root
  Language language = Language::kJava;
  std::string text;
  int lines = 0;
  // Occurrence ids of this file, by start byte.
  std::vector<int> occurrences;
};

struct IndexStats {
  int files = 0;
  int64_t lines = 0;
  int symbols = 0;
  int occurrences = 0;
  // Where the build's time went (wall clock, milliseconds).
  double parse_ms = 0;
  double bind_ms = 0;
};

class Index {
 public:
  std::vector<SourceFile> files;
  std::vector<Symbol> symbols;
  std::vector<Occurrence> occurrences;
  // Occurrence ids that resolve to a symbol.
  std::unordered_map<int, std::vector<int>> occurrences_of_symbol;
  // Occurrence ids with an unknown receiver, by name.
  std::unordered_map<std::string, std::vector<int>> unresolved_by_name;
  std::unordered_map<std::string, int> file_by_path;
  // Methods and fields of classes, by name.
  std::unordered_map<std::string, std::vector<int>> members_by_name;

  // The occurrence whose identifier covers (line, column), 1-based, in
  // `path`, else -1.
  int OccurrenceAt(absl::string_view path, int line, int column) const;
  int FileOf(absl::string_view path) const;
  IndexStats Stats() const;

  double parse_ms = 0;
  double bind_ms = 0;
};

struct IndexOptions {
  // Folders skipped at any depth, besides hidden ones.
  std::vector<std::string> skip_dirs = {
      "node_modules", "build", "target", "out",         "dist",
      "venv",         ".venv", "env",    "__pycache__", "site-packages"};
  // Files larger than this are skipped (generated code).
  int64_t max_file_bytes = 2 << 20;
};

// The .java, .py and .pyi files under `root` (relative paths, sorted), the
// skipped folders left out; links to files are followed, links to folders
// are not.
absl::StatusOr<std::vector<std::string>> ListSourceFiles(
    const std::string& root, const IndexOptions& options = IndexOptions());

// Indexes every .java and .py file under `root`.
absl::StatusOr<std::unique_ptr<Index>> BuildIndex(
    const std::string& root, const IndexOptions& options = IndexOptions());

// Indexes the given files (path relative, text) without reading a disk.
std::unique_ptr<Index> BuildIndexFromSources(
    const std::vector<std::pair<std::string, std::string>>& sources);

}  // namespace garuda::knowledge

#endif  // GARUDA_LIB_KNOWLEDGE_INDEX_H_
