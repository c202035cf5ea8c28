// The parts of a query around its search: naming the symbol a person
// asked about (PositionOfSymbol), the dotted names results carry and the
// source line shown beside each hit (AddContext).
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"
#include "lib/knowledge/qualified_name.h"
#include "lib/knowledge/query.h"

namespace garuda::knowledge {

std::string QualifiedName(const Index& index, int symbol) {
  const Symbol& s = index.symbols[symbol];
  std::string name = s.name.empty() ? "<anonymous>" : s.name;
  if (s.owner_class >= 0) {
    return absl::StrCat(QualifiedName(index, s.owner_class), ".", name);
  }
  if (s.kind == SymbolKind::kClass || s.kind == SymbolKind::kFunction ||
      s.kind == SymbolKind::kVariable) {
    return absl::StrCat(index.files[s.file].path, ":", name);
  }
  return name;
}

namespace {

constexpr size_t kContextChars = 160;

// The text of 1-based `line` of `text`, without its leading and trailing
// white space, cut at kContextChars bytes (at a UTF-8 boundary).
std::string LineText(const std::string& text, int line) {
  size_t start = 0;
  for (int i = 1; i < line; ++i) {
    start = text.find('\n', start);
    if (start == std::string::npos) return "";
    ++start;
  }
  size_t end = text.find('\n', start);
  absl::string_view view = absl::string_view(text).substr(
      start, end == std::string::npos ? std::string::npos : end - start);
  view = absl::StripAsciiWhitespace(view);
  std::string out(view.substr(0, kContextChars));
  if (view.size() > kContextChars) {
    while (!out.empty() &&
           (static_cast<unsigned char>(out.back()) & 0xC0) == 0x80) {
      out.pop_back();
    }
    if (!out.empty() && static_cast<unsigned char>(out.back()) >= 0xC0) {
      out.pop_back();
    }
    out += "...";
  }
  return out;
}

bool IsNamedDeclaration(const Symbol& s) {
  switch (s.kind) {
    case SymbolKind::kClass:
    case SymbolKind::kMethod:
    case SymbolKind::kConstructor:
    case SymbolKind::kFunction:
    case SymbolKind::kField:
    case SymbolKind::kVariable:
    case SymbolKind::kEnumConstant:
      return true;
    default:
      return false;
  }
}

// "shop/cart.py" -> "shop.cart"; "src/main/java/a/B.java" ->
// "src.main.java.a" (a Java file's classes carry their own names).
std::string ModuleOfPath(absl::string_view path) {
  size_t cut =
      absl::EndsWith(path, ".java") ? path.rfind('/') : path.rfind('.');
  path = cut == absl::string_view::npos ? absl::string_view()
                                        : path.substr(0, cut);
  return absl::StrReplaceAll(path, {{"/", "."}});
}

// The names a declaration answers to, from the most qualified: the file's
// dotted path with its classes ("src.shop.cart.Cart.add") and every dotted
// suffix of it that keeps the name ("shop.cart.Cart.add", "Cart.add",
// "add"); a package or module name is such a suffix.
bool AnswersTo(const Index& index, const Symbol& s, absl::string_view symbol) {
  std::string dotted = s.name;
  for (int owner = s.owner_class; owner >= 0;
       owner = index.symbols[owner].owner_class) {
    dotted = absl::StrCat(index.symbols[owner].name, ".", dotted);
  }
  std::string module = ModuleOfPath(index.files[s.file].path);
  std::string full =
      module.empty() ? dotted : absl::StrCat(module, ".", dotted);
  if (symbol == full) return true;
  return absl::EndsWith(full, symbol) && full.size() > symbol.size() &&
         full[full.size() - symbol.size() - 1] == '.';
}

}  // namespace

void AddContext(const Index& index, QueryResult& result) {
  for (Hit& hit : result.results) {
    int file = index.FileOf(hit.path);
    if (file >= 0) hit.context = LineText(index.files[file].text, hit.line);
  }
}

absl::StatusOr<QueryPosition> PositionOfSymbol(const Index& index,
                                               absl::string_view symbol) {
  symbol = absl::StripAsciiWhitespace(symbol);
  if (symbol.empty()) {
    return absl::InvalidArgumentError("the symbol is empty");
  }
  std::vector<int> candidates;
  for (const Symbol& s : index.symbols) {
    if (IsNamedDeclaration(s) && !s.is_import && !s.name.empty() &&
        AnswersTo(index, s, symbol)) {
      candidates.push_back(s.id);
    }
  }
  // A constructor is its class's candidate.
  std::set<int> classes;
  for (int id : candidates) {
    if (index.symbols[id].kind == SymbolKind::kClass) classes.insert(id);
  }
  std::vector<int> kept;
  for (int id : candidates) {
    const Symbol& s = index.symbols[id];
    if (s.kind == SymbolKind::kConstructor && classes.count(s.owner_class)) {
      continue;
    }
    kept.push_back(id);
  }
  if (kept.empty()) {
    return absl::NotFoundError(absl::StrCat(
        "no class, function, method, field or constant named `", symbol,
        "` is declared in the project's Java or Python files"));
  }
  if (kept.size() > 1) {
    std::vector<std::string> listed;
    for (size_t i = 0; i < kept.size() && i < 10; ++i) {
      const Symbol& s = index.symbols[kept[i]];
      listed.push_back(absl::StrCat(
          SymbolKindName(s.kind), " ", QualifiedName(index, s.id), " at ",
          index.files[s.file].path, ":", s.line, ":", s.column));
    }
    return absl::InvalidArgumentError(absl::StrCat(
        "`", symbol, "` is ambiguous (", kept.size(), " declarations: ",
        absl::StrJoin(listed, "; "), kept.size() > 10 ? "; ..." : "",
        "); qualify it (Class.member, module.name) or give path, line and "
        "column"));
  }
  const Symbol& s = index.symbols[kept[0]];
  return QueryPosition{index.files[s.file].path, s.line, s.column};
}

}  // namespace garuda::knowledge
