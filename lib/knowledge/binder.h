// Internal to lib/knowledge: the parse trees and the helpers that the Java
// and Python binders share.
#ifndef GARUDA_LIB_KNOWLEDGE_BINDER_H_
#define GARUDA_LIB_KNOWLEDGE_BINDER_H_

#include <tree_sitter/api.h>

#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "lib/knowledge/index.h"

namespace garuda::knowledge {

// One parsed file; owns its tree.
class ParsedFile {
 public:
  ParsedFile(int file, TSTree* tree) : file_(file), tree_(tree) {}
  ParsedFile(ParsedFile&& other) noexcept
      : file_(other.file_), tree_(other.tree_) {
    other.tree_ = nullptr;
  }
  ParsedFile(const ParsedFile&) = delete;
  ParsedFile& operator=(const ParsedFile&) = delete;
  ~ParsedFile() {
    if (tree_ != nullptr) ts_tree_delete(tree_);
  }
  int file() const { return file_; }
  TSNode root() const { return ts_tree_root_node(tree_); }

 private:
  int file_;
  TSTree* tree_;
};

inline absl::string_view NodeText(TSNode node, const std::string& source) {
  if (ts_node_is_null(node)) return {};
  uint32_t start = ts_node_start_byte(node);
  uint32_t end = ts_node_end_byte(node);
  if (end > source.size() || start > end) return {};
  return absl::string_view(source).substr(start, end - start);
}

inline TSNode Field(TSNode node, const char* name) {
  return ts_node_child_by_field_name(node, name,
                                     static_cast<uint32_t>(strlen(name)));
}

inline bool Is(TSNode node, const char* type) {
  return !ts_node_is_null(node) && strcmp(ts_node_type(node), type) == 0;
}

// With a cursor: ts_node_named_child(i) walks from the first child each
// time, which is quadratic on long blocks.
inline std::vector<TSNode> NamedChildren(TSNode node) {
  std::vector<TSNode> children;
  if (ts_node_is_null(node)) return children;
  TSTreeCursor cursor = ts_tree_cursor_new(node);
  if (ts_tree_cursor_goto_first_child(&cursor)) {
    do {
      TSNode child = ts_tree_cursor_current_node(&cursor);
      if (ts_node_is_named(child)) children.push_back(child);
    } while (ts_tree_cursor_goto_next_sibling(&cursor));
  }
  ts_tree_cursor_delete(&cursor);
  return children;
}

// A node's place in the project (file, start byte), as a map key.
inline uint64_t Key(int file, uint32_t byte) {
  return (static_cast<uint64_t>(file) << 32) | byte;
}

// Adds an occurrence for `node` (an identifier) and returns its id.
int AddOccurrence(Index& index, int file, TSNode node, absl::string_view name);

// Adds a symbol declared at `node` and returns its id.
int AddSymbol(Index& index, SymbolKind kind, absl::string_view name, int file,
              TSNode node);

const TSLanguage* JavaLanguage();
const TSLanguage* PythonLanguage();

// Each binder declares, then resolves, every file of its language.
void BindJava(Index& index, const std::vector<ParsedFile>& files);
void BindPython(Index& index, const std::vector<ParsedFile>& files);

}  // namespace garuda::knowledge

#endif  // GARUDA_LIB_KNOWLEDGE_BINDER_H_
