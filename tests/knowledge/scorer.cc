#include "tests/knowledge/scorer.h"

#include <openssl/evp.h>

#include <algorithm>
#include <memory>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "lib/base/files.h"
#include "lib/base/status_macros.h"
#include "lib/knowledge/index.h"

namespace garuda::knowledge {
namespace {

using google::protobuf::Struct;
using google::protobuf::Value;

absl::Status Malformed(absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("malformed oracle evidence: ", what));
}

absl::StatusOr<std::string> StringField(const Struct& object,
                                        const std::string& name,
                                        absl::string_view where) {
  auto it = object.fields().find(name);
  if (it == object.fields().end() || !it->second.has_string_value() ||
      it->second.string_value().empty()) {
    return Malformed(
        absl::StrCat(where, ": `", name, "` must be a non-empty string"));
  }
  return it->second.string_value();
}

absl::StatusOr<int> IntField(const Struct& object, const std::string& name,
                             absl::string_view where) {
  auto it = object.fields().find(name);
  if (it == object.fields().end() || !it->second.has_number_value() ||
      it->second.number_value() < 1 ||
      it->second.number_value() !=
          static_cast<int>(it->second.number_value())) {
    return Malformed(
        absl::StrCat(where, ": `", name, "` must be a positive integer"));
  }
  return static_cast<int>(it->second.number_value());
}

bool ValidSite(const std::string& site) {
  size_t colon = site.rfind(':');
  int line;
  return colon != std::string::npos && colon > 0 &&
         absl::SimpleAtoi(site.substr(colon + 1), &line) && line >= 1;
}

}  // namespace

absl::StatusOr<Evidence> ParseEvidence(absl::string_view json,
                                       int min_queries) {
  Struct root;
  auto status =
      google::protobuf::util::JsonStringToMessage(std::string(json), &root);
  if (!status.ok())
    return Malformed(absl::StrCat("not JSON: ", status.ToString()));
  Evidence evidence;
  ASSIGN_OR_RETURN(evidence.language,
                   StringField(root, "language", "top level"));
  if (evidence.language != "java" && evidence.language != "python") {
    return Malformed(
        absl::StrCat("unknown language `", evidence.language, "`"));
  }
  ASSIGN_OR_RETURN(evidence.oracle, StringField(root, "oracle", "top level"));
  ASSIGN_OR_RETURN(evidence.fixture_sha256,
                   StringField(root, "fixtureSha256", "top level"));
  if (evidence.fixture_sha256.size() != 64 ||
      !std::all_of(evidence.fixture_sha256.begin(),
                   evidence.fixture_sha256.end(),
                   [](char c) { return absl::ascii_isxdigit(c); })) {
    return Malformed("`fixtureSha256` must be 64 hex digits");
  }
  auto queries = root.fields().find("queries");
  if (queries == root.fields().end() || !queries->second.has_list_value()) {
    return Malformed("`queries` must be a list");
  }
  std::set<std::string> ids;
  int index = 0;
  for (const Value& value : queries->second.list_value().values()) {
    std::string where = absl::StrCat("queries[", index++, "]");
    if (!value.has_struct_value())
      return Malformed(where + " must be an object");
    const Struct& object = value.struct_value();
    OracleQuery query;
    ASSIGN_OR_RETURN(query.id, StringField(object, "id", where));
    ASSIGN_OR_RETURN(query.path, StringField(object, "path", where));
    ASSIGN_OR_RETURN(query.line, IntField(object, "line", where));
    ASSIGN_OR_RETURN(query.column, IntField(object, "column", where));
    ASSIGN_OR_RETURN(query.name, StringField(object, "name", where));
    if (!ids.insert(query.id).second) {
      return Malformed(absl::StrCat(where, ": duplicate id ", query.id));
    }
    auto sites = object.fields().find("sites");
    if (sites == object.fields().end() || !sites->second.has_list_value()) {
      return Malformed(where + ": `sites` must be a list");
    }
    for (const Value& site : sites->second.list_value().values()) {
      if (!site.has_string_value() || !ValidSite(site.string_value())) {
        return Malformed(where + ": every site must be \"path:line\"");
      }
      query.sites.insert(site.string_value());
    }
    evidence.queries.push_back(std::move(query));
  }
  if (static_cast<int>(evidence.queries.size()) < min_queries) {
    return Malformed(absl::StrCat("only ", evidence.queries.size(),
                                  " queries; at least ", min_queries,
                                  " are needed"));
  }
  return evidence;
}

absl::StatusOr<std::string> FixtureSha256(const std::string& project,
                                          absl::string_view language) {
  ASSIGN_OR_RETURN(std::vector<std::string> all, ListSourceFiles(project));
  std::vector<std::string> paths;
  for (const std::string& path : all) {
    bool java = absl::EndsWith(path, ".java");
    if ((language == "java") == java) paths.push_back(path);
  }
  if (paths.empty()) {
    return absl::NotFoundError(
        absl::StrCat("no ", language, " sources under ", project));
  }
  std::sort(paths.begin(), paths.end());
  std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> context(EVP_MD_CTX_new(),
                                                             EVP_MD_CTX_free);
  EVP_DigestInit_ex(context.get(), EVP_sha256(), nullptr);
  const char zero = '\0';
  for (const std::string& path : paths) {
    ASSIGN_OR_RETURN(std::string content,
                     ReadFileToString(JoinPath(project, path)));
    EVP_DigestUpdate(context.get(), path.data(), path.size());
    EVP_DigestUpdate(context.get(), &zero, 1);
    EVP_DigestUpdate(context.get(), content.data(), content.size());
    EVP_DigestUpdate(context.get(), &zero, 1);
  }
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_DigestFinal_ex(context.get(), digest, &length);
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) {
    absl::StrAppend(&hex, absl::StrFormat("%02x", digest[i]));
  }
  return hex;
}

absl::Status CheckFresh(const Evidence& evidence, const std::string& project) {
  ASSIGN_OR_RETURN(std::string hash, FixtureSha256(project, evidence.language));
  if (hash != evidence.fixture_sha256) {
    return absl::FailedPreconditionError(
        absl::StrCat("stale oracle evidence: the ", evidence.language,
                     " fixture sources changed since the capture (sha256 ",
                     hash, ", captured ", evidence.fixture_sha256,
                     "); run tools/knowledge/capture.py ", evidence.language));
  }
  return absl::OkStatus();
}

void AddToScore(const std::vector<std::string>& predicted,
                const std::set<std::string>& expected,
                const std::string& declaration, Score* score) {
  std::set<std::string> unique(predicted.begin(), predicted.end());
  unique.erase(declaration);
  std::set<std::string> truth = expected;
  truth.erase(declaration);
  for (const std::string& site : unique) {
    if (truth.count(site)) ++score->true_positives;
  }
  score->predicted += static_cast<int>(unique.size());
  score->expected += static_cast<int>(truth.size());
}

absl::Status CheckFloors(const Score& score, double precision_floor,
                         double recall_floor, absl::string_view label) {
  if (score.precision() < precision_floor) {
    return absl::FailedPreconditionError(
        absl::StrFormat("%s precision %.1f%% (%d/%d) is under the floor %.1f%%",
                        label, 100 * score.precision(), score.true_positives,
                        score.predicted, 100 * precision_floor));
  }
  if (score.recall() < recall_floor) {
    return absl::FailedPreconditionError(
        absl::StrFormat("%s recall %.1f%% (%d/%d) is under the floor %.1f%%",
                        label, 100 * score.recall(), score.true_positives,
                        score.expected, 100 * recall_floor));
  }
  return absl::OkStatus();
}

}  // namespace garuda::knowledge
