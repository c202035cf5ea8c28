#include "lib/knowledge/index.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/base/files.h"
#include "lib/knowledge/binder.h"

extern "C" const TSLanguage* tree_sitter_java(void);
extern "C" const TSLanguage* tree_sitter_python(void);

namespace garuda::knowledge {

const TSLanguage* JavaLanguage() { return tree_sitter_java(); }
const TSLanguage* PythonLanguage() { return tree_sitter_python(); }

absl::string_view SymbolKindName(SymbolKind kind) {
  switch (kind) {
    case SymbolKind::kClass:
      return "class";
    case SymbolKind::kMethod:
      return "method";
    case SymbolKind::kConstructor:
      return "constructor";
    case SymbolKind::kFunction:
      return "function";
    case SymbolKind::kField:
      return "field";
    case SymbolKind::kVariable:
      return "variable";
    case SymbolKind::kParameter:
      return "parameter";
    case SymbolKind::kLocal:
      return "local";
    case SymbolKind::kEnumConstant:
      return "enum constant";
    case SymbolKind::kModule:
      return "module";
  }
  return "symbol";
}

int AddOccurrence(Index& index, int file, TSNode node, absl::string_view name) {
  Occurrence occurrence;
  occurrence.file = file;
  TSPoint point = ts_node_start_point(node);
  occurrence.line = static_cast<int>(point.row) + 1;
  occurrence.column = static_cast<int>(point.column) + 1;
  occurrence.start_byte = ts_node_start_byte(node);
  occurrence.end_byte = ts_node_end_byte(node);
  occurrence.name = std::string(name);
  index.occurrences.push_back(std::move(occurrence));
  return static_cast<int>(index.occurrences.size()) - 1;
}

int AddSymbol(Index& index, SymbolKind kind, absl::string_view name, int file,
              TSNode node) {
  Symbol symbol;
  symbol.id = static_cast<int>(index.symbols.size());
  symbol.kind = kind;
  symbol.name = std::string(name);
  symbol.file = file;
  TSPoint point = ts_node_start_point(node);
  symbol.line = static_cast<int>(point.row) + 1;
  symbol.column = static_cast<int>(point.column) + 1;
  symbol.end_line = symbol.line;
  index.symbols.push_back(std::move(symbol));
  return index.symbols.back().id;
}

int Index::FileOf(absl::string_view path) const {
  std::string key(path);
  while (absl::StartsWith(key, "./")) key = key.substr(2);
  auto it = file_by_path.find(key);
  return it == file_by_path.end() ? -1 : it->second;
}

int Index::OccurrenceAt(absl::string_view path, int line, int column) const {
  int file = FileOf(path);
  if (file < 0) return -1;
  for (int id : files[file].occurrences) {
    const Occurrence& o = occurrences[id];
    if (o.line != line) continue;
    int length = static_cast<int>(o.end_byte - o.start_byte);
    if (column >= o.column && column <= o.column + length) return id;
  }
  return -1;
}

IndexStats Index::Stats() const {
  IndexStats stats;
  stats.files = static_cast<int>(files.size());
  for (const SourceFile& file : files) stats.lines += file.lines;
  stats.symbols = static_cast<int>(symbols.size());
  stats.occurrences = static_cast<int>(occurrences.size());
  stats.parse_ms = parse_ms;
  stats.bind_ms = bind_ms;
  return stats;
}

namespace {

bool LanguageOf(absl::string_view path, Language* language) {
  if (absl::EndsWith(path, ".java")) {
    *language = Language::kJava;
    return true;
  }
  if (absl::EndsWith(path, ".py") || absl::EndsWith(path, ".pyi")) {
    *language = Language::kPython;
    return true;
  }
  return false;
}

// Lists source files under root/relative, sorted, without following links.
absl::Status ListSources(const std::string& root, const std::string& relative,
                         const IndexOptions& options,
                         std::vector<std::string>* out) {
  std::string dir = relative.empty() ? root : JoinPath(root, relative);
  DIR* handle = opendir(dir.c_str());
  if (handle == nullptr) {
    return absl::NotFoundError(absl::StrCat("cannot read folder ", dir));
  }
  std::vector<std::pair<std::string, bool>> entries;
  while (struct dirent* entry = readdir(handle)) {
    std::string name = entry->d_name;
    if (name.empty() || name[0] == '.') continue;
    std::string child = relative.empty() ? name : relative + "/" + name;
    struct stat info;
    if (lstat(JoinPath(root, child).c_str(), &info) != 0) continue;
    // A link to a file is followed (Bazel's runfiles are links); a link to
    // a folder is not, so a cycle cannot form.
    if (S_ISLNK(info.st_mode) &&
        (stat(JoinPath(root, child).c_str(), &info) != 0 ||
         !S_ISREG(info.st_mode))) {
      continue;
    }
    if (S_ISDIR(info.st_mode)) {
      if (std::find(options.skip_dirs.begin(), options.skip_dirs.end(), name) !=
              options.skip_dirs.end() ||
          absl::StartsWith(name, "bazel-")) {
        continue;
      }
      entries.emplace_back(child, true);
    } else if (S_ISREG(info.st_mode)) {
      Language language;
      if (LanguageOf(name, &language) &&
          info.st_size <= options.max_file_bytes) {
        entries.emplace_back(child, false);
      }
    }
  }
  closedir(handle);
  std::sort(entries.begin(), entries.end());
  for (const auto& [child, is_dir] : entries) {
    if (is_dir) {
      absl::Status status = ListSources(root, child, options, out);
      if (!status.ok() && relative.empty()) return status;
    } else {
      out->push_back(child);
    }
  }
  return absl::OkStatus();
}

std::unique_ptr<Index> Build(
    std::vector<std::pair<std::string, std::string>> sources) {
  auto index = std::make_unique<Index>();
  for (auto& [path, text] : sources) {
    SourceFile file;
    if (!LanguageOf(path, &file.language)) continue;
    file.path = path;
    file.text = std::move(text);
    file.lines =
        static_cast<int>(std::count(file.text.begin(), file.text.end(), '\n'));
    if (!file.text.empty() && file.text.back() != '\n') ++file.lines;
    index->file_by_path[file.path] = static_cast<int>(index->files.size());
    index->files.push_back(std::move(file));
  }
  std::vector<ParsedFile> java;
  std::vector<ParsedFile> python;
  auto parse_start = std::chrono::steady_clock::now();
  // Parsing is independent per file: two threads (one parser each).
  std::vector<TSTree*> trees(index->files.size(), nullptr);
  auto parse_range = [&](size_t first, size_t step) {
    TSParser* parser = ts_parser_new();
    for (size_t i = first; i < index->files.size(); i += step) {
      const SourceFile& file = index->files[i];
      bool is_java = file.language == Language::kJava;
      ts_parser_set_language(parser,
                             is_java ? JavaLanguage() : PythonLanguage());
      trees[i] =
          ts_parser_parse_string(parser, nullptr, file.text.data(),
                                 static_cast<uint32_t>(file.text.size()));
    }
    ts_parser_delete(parser);
  };
  std::thread helper(parse_range, 1, 2);
  parse_range(0, 2);
  helper.join();
  for (size_t i = 0; i < trees.size(); ++i) {
    if (trees[i] == nullptr) continue;
    bool is_java = index->files[i].language == Language::kJava;
    (is_java ? java : python).emplace_back(static_cast<int>(i), trees[i]);
  }
  auto bind_start = std::chrono::steady_clock::now();
  if (!java.empty()) BindJava(*index, java);
  if (!python.empty()) BindPython(*index, python);
  index->parse_ms =
      std::chrono::duration<double, std::milli>(bind_start - parse_start)
          .count();

  for (size_t id = 0; id < index->occurrences.size(); ++id) {
    const Occurrence& o = index->occurrences[id];
    index->files[o.file].occurrences.push_back(static_cast<int>(id));
    for (int symbol : o.symbols) {
      index->occurrences_of_symbol[symbol].push_back(static_cast<int>(id));
    }
    if (o.unknown_receiver) {
      index->unresolved_by_name[o.name].push_back(static_cast<int>(id));
    }
  }
  for (const Symbol& symbol : index->symbols) {
    if (symbol.owner_class >= 0 && (symbol.kind == SymbolKind::kMethod ||
                                    symbol.kind == SymbolKind::kField)) {
      index->members_by_name[symbol.name].push_back(symbol.id);
    }
  }
  index->bind_ms = std::chrono::duration<double, std::milli>(
                       std::chrono::steady_clock::now() - bind_start)
                       .count();
  for (SourceFile& file : index->files) {
    std::sort(file.occurrences.begin(), file.occurrences.end(),
              [&](int a, int b) {
                return index->occurrences[a].start_byte <
                       index->occurrences[b].start_byte;
              });
  }
  return index;
}

}  // namespace

std::unique_ptr<Index> BuildIndexFromSources(
    const std::vector<std::pair<std::string, std::string>>& sources) {
  return Build(sources);
}

absl::StatusOr<std::vector<std::string>> ListSourceFiles(
    const std::string& root, const IndexOptions& options) {
  std::vector<std::string> paths;
  absl::Status listed = ListSources(root, "", options, &paths);
  if (!listed.ok()) return listed;
  return paths;
}

absl::StatusOr<std::unique_ptr<Index>> BuildIndex(const std::string& root,
                                                  const IndexOptions& options) {
  struct stat info;
  if (stat(root.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) {
    return absl::NotFoundError(
        absl::StrCat("project root ", root, " is not a folder"));
  }
  absl::StatusOr<std::vector<std::string>> paths =
      ListSourceFiles(root, options);
  if (!paths.ok()) return paths.status();
  std::vector<std::pair<std::string, std::string>> sources;
  sources.reserve(paths->size());
  for (const std::string& path : *paths) {
    absl::StatusOr<std::string> text = ReadFileToString(JoinPath(root, path));
    if (!text.ok()) continue;  // vanished or unreadable: not indexed
    sources.emplace_back(path, *std::move(text));
  }
  return Build(std::move(sources));
}

}  // namespace garuda::knowledge
