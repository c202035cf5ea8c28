// The evidence behind lib/knowledge's precision and recall: frozen oracle
// captures (tests/data/knowledge/<language>/oracle.json), validated, checked
// against the fixture sources they were made from, and scored over unique
// path:line sites with the queried declaration's line excluded.
#ifndef GARUDA_TESTS_KNOWLEDGE_SCORER_H_
#define GARUDA_TESTS_KNOWLEDGE_SCORER_H_

#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace garuda::knowledge {

struct OracleQuery {
  std::string id;
  std::string path;
  int line = 0;
  int column = 0;
  std::string name;
  std::set<std::string> sites;  // "path:line"
};

struct Evidence {
  std::string language;
  std::string oracle;
  std::string fixture_sha256;
  std::vector<OracleQuery> queries;
};

// Parses and validates an oracle capture: every field present with its
// type, unique ids, sites of the form path:line, at least `min_queries`.
absl::StatusOr<Evidence> ParseEvidence(absl::string_view json,
                                       int min_queries = 30);

// SHA-256 over the sorted `path NUL content NUL` of the language's sources
// under `project` (tools/knowledge/capture.py computes the same).
absl::StatusOr<std::string> FixtureSha256(const std::string& project,
                                          absl::string_view language);

// FAILED_PRECONDITION when the sources no longer match the capture.
absl::Status CheckFresh(const Evidence& evidence, const std::string& project);

struct Score {
  int true_positives = 0;
  int predicted = 0;
  int expected = 0;
  double precision() const {
    return predicted == 0 ? (expected == 0 ? 1.0 : 0.0)
                          : static_cast<double>(true_positives) / predicted;
  }
  double recall() const {
    return expected == 0 ? 1.0 : static_cast<double>(true_positives) / expected;
  }
};

// Adds one query: `predicted` sites (duplicates collapse) against the
// oracle's, the declaration line `declaration` ("path:line") excluded.
void AddToScore(const std::vector<std::string>& predicted,
                const std::set<std::string>& expected,
                const std::string& declaration, Score* score);

// FAILED_PRECONDITION naming the figure that is under its floor.
absl::Status CheckFloors(const Score& score, double precision_floor,
                         double recall_floor, absl::string_view label);

}  // namespace garuda::knowledge

#endif  // GARUDA_TESTS_KNOWLEDGE_SCORER_H_
