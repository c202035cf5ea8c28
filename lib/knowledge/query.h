// The three code questions over an Index: find_references, callers and
// impact. Every result carries its provenance; the envelope says
// `approximate` whenever any result is not precise, and also when nothing
// was found or the symbol did not resolve.
#ifndef GARUDA_LIB_KNOWLEDGE_QUERY_H_
#define GARUDA_LIB_KNOWLEDGE_QUERY_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lib/knowledge/index.h"

namespace garuda::knowledge {

enum class Provenance {
  kPrecise,      // from a language server
  kSyntactic,    // confirmed by scope or receiver type
  kSearchBased,  // a name match only
};

absl::string_view ProvenanceName(Provenance provenance);

struct Hit {
  std::string path;
  int line = 0;    // 1-based
  int column = 0;  // 1-based byte column
  Provenance provenance = Provenance::kSearchBased;
  // callers and impact: the function or method that holds the reference
  // ("" at module or class level) and where it is declared.
  std::string function;
  std::string function_path;
  int function_line = 0;
  // impact: how many calls away from the symbol (1 = a direct caller).
  int depth = 0;
  // The source line of the hit, trimmed and cut (AddContext), for a reader
  // who should not need to open the file to judge it.
  std::string context;
};

struct QueryResult {
  std::string operation;  // find_references, callers, impact
  // What the position named ("method shop.Cart.add"), empty if nothing.
  std::string symbol;
  bool approximate = true;
  bool truncated = false;
  // Why the result is approximate or empty, and fallbacks taken.
  std::vector<std::string> notes;
  std::vector<Hit> results;
  // impact: a heuristic risk label (low, medium, high).
  std::string risk;
};

struct QueryPosition {
  std::string path;  // relative to the project root
  int line = 0;      // 1-based
  int column = 0;    // 1-based byte column
};

// Which name matches with an unknown receiver type (`x.name` where the type
// of x is not known) are kept, as search_based results.
enum class UnknownReceivers {
  kAll,  // every member access with the name (and a fitting arity)
  // only when no class outside the target's hierarchy declares a member
  // with this name: then the match can mean nothing else in the project
  kUnique,
  kNone,
};

// The measured choice per language (docs/code-intelligence.md), from the
// file's extension.
UnknownReceivers DefaultUnknownReceivers(absl::string_view path);

struct QueryOptions {
  int max_results = 500;
  int impact_depth = 2;
  UnknownReceivers unknown_receivers = UnknownReceivers::kUnique;
};

QueryResult FindReferences(const Index& index, const QueryPosition& position,
                           const QueryOptions& options = QueryOptions());
QueryResult Callers(const Index& index, const QueryPosition& position,
                    const QueryOptions& options = QueryOptions());
QueryResult Impact(const Index& index, const QueryPosition& position,
                   const QueryOptions& options = QueryOptions());

// Sets `approximate` from the results (any non-precise result, or none),
// orders precise and syntactic results before search_based ones, and
// truncates to `max_results`, keeping the flag.
void Finish(QueryResult& result, int max_results);

// Fills each hit's `context` from the indexed text of its file (hits in
// files the index does not hold keep an empty one).
void AddContext(const Index& index, QueryResult& result);

// The declaration a name means, for the model's `{symbol}` form: a simple
// name ("add"), or one qualified by its classes ("Cart.add"), its module or
// package ("shop.cart.Cart.add"). Parameters and locals are never meant.
// NOT_FOUND when nothing is declared with that name; INVALID_ARGUMENT
// listing the candidates (path:line) when it is ambiguous. A class and its
// constructors are one candidate: the class.
absl::StatusOr<QueryPosition> PositionOfSymbol(const Index& index,
                                               absl::string_view symbol);

}  // namespace garuda::knowledge

#endif  // GARUDA_LIB_KNOWLEDGE_QUERY_H_
