// lib/knowledge against the frozen oracles: fails when precision or recall
// falls under the floors below, or when the evidence is stale or malformed.
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "lib/knowledge/index.h"
#include "lib/knowledge/query.h"
#include "tests/knowledge/scorer.h"

namespace garuda::knowledge {
namespace {

// The floors, fixed here and not read from the data: the spec's recorded
// figures were Java 61.1% / 91.7% and Python 71.4% / 93.8%.
constexpr double kPrecisionFloor = 0.90;
constexpr double kRecallFloor = 0.97;

std::string DataDir(const std::string& language) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  std::string base = srcdir ? JoinPath(srcdir, "garuda") : ".";
  return JoinPath(base, JoinPath("tests/data/knowledge", language));
}

Evidence LoadEvidence(const std::string& language, int min_queries = 30) {
  absl::StatusOr<std::string> json =
      ReadFileToString(JoinPath(DataDir(language), "oracle.json"));
  EXPECT_TRUE(json.ok()) << json.status();
  absl::StatusOr<Evidence> evidence =
      ParseEvidence(json.ok() ? *json : "", min_queries);
  EXPECT_TRUE(evidence.ok()) << evidence.status();
  return evidence.ok() ? *evidence : Evidence();
}

Score Measure(const Evidence& evidence, const std::string& project) {
  auto index = BuildIndex(project);
  EXPECT_TRUE(index.ok()) << index.status();
  Score score;
  if (!index.ok()) return score;
  QueryOptions options;
  options.max_results = -1;
  for (const OracleQuery& query : evidence.queries) {
    options.unknown_receivers = DefaultUnknownReceivers(query.path);
    QueryResult result = FindReferences(
        **index, {query.path, query.line, query.column}, options);
    EXPECT_FALSE(result.symbol.empty())
        << query.id << ": the declaration did not resolve";
    std::vector<std::string> sites;
    for (const Hit& hit : result.results) {
      sites.push_back(absl::StrCat(hit.path, ":", hit.line));
    }
    AddToScore(sites, query.sites, absl::StrCat(query.path, ":", query.line),
               &score);
  }
  return score;
}

// `fixture` is a folder of tests/data/knowledge; the generated ones are
// named after their language, the hand-made ones (one class of references
// each, fewer queries) say theirs in the capture.
void ExpectFloors(const std::string& fixture, const std::string& language = "",
                  double precision_floor = kPrecisionFloor,
                  double recall_floor = kRecallFloor, int min_queries = 30) {
  Evidence evidence = LoadEvidence(fixture, min_queries);
  ASSERT_EQ(evidence.language, language.empty() ? fixture : language);
  std::string project = JoinPath(DataDir(fixture), "project");
  absl::Status fresh = CheckFresh(evidence, project);
  ASSERT_TRUE(fresh.ok()) << fresh;
  Score score = Measure(evidence, project);
  std::cout << fixture << ": precision " << 100 * score.precision() << "% ("
            << score.true_positives << "/" << score.predicted << "), recall "
            << 100 * score.recall() << "% (" << score.true_positives << "/"
            << score.expected << "), " << evidence.queries.size()
            << " queries, oracle: " << evidence.oracle << "\n";
  absl::Status floors =
      CheckFloors(score, precision_floor, recall_floor, fixture);
  EXPECT_TRUE(floors.ok()) << floors;
}

TEST(OracleTest, JavaMeetsTheFloors) { ExpectFloors("java"); }

TEST(OracleTest, PythonMeetsTheFloors) { ExpectFloors("python"); }

// The hand-made projects of issue 29, each one class of references that
// real libraries use heavily; their floors are the issue's goal (0.98).
// Recall before the binder followed imports through packages: aliases
// 94.1%, re-exports 87.8%, submodules 42.1%.
constexpr double kHandMadeFloor = 0.98;

TEST(OracleTest, PythonAliasesByAssignmentMeetTheFloors) {
  ExpectFloors("python-aliases", "python", kHandMadeFloor, kHandMadeFloor, 8);
}

TEST(OracleTest, PythonReExportsMeetTheFloors) {
  ExpectFloors("python-reexports", "python", kHandMadeFloor, kHandMadeFloor, 8);
}

// Overloads a project declares on JDK types (copy(Reader, Writer) beside
// copy(Reader, OutputStream)), chosen by javac from the arguments' static
// types: precision 58.3% before the JDK supertypes were known.
TEST(OracleTest, JavaOverloadsOnJdkTypesMeetTheFloors) {
  ExpectFloors("java-methods", "java", kHandMadeFloor, kHandMadeFloor, 8);
}

TEST(OracleTest, PythonSubmodulesAsAttributesMeetTheFloors) {
  ExpectFloors("python-submodules", "python", kHandMadeFloor, kHandMadeFloor,
               8);
}

TEST(OracleTest, StaleEvidenceIsRejected) {
  Evidence evidence = LoadEvidence("python");
  // A copy of the fixture with one changed line.
  std::string copy = JoinPath(std::getenv("TEST_TMPDIR"), "stale");
  std::string project = JoinPath(DataDir("python"), "project");
  ASSERT_EQ(
      std::system(absl::StrCat("cp -r '", project, "' '", copy, "'").c_str()),
      0);
  EXPECT_TRUE(CheckFresh(evidence, copy).ok());
  std::string path = JoinPath(copy, "shopkit/money.py");
  auto text = ReadFileToString(path);
  ASSERT_TRUE(text.ok());
  ASSERT_TRUE(WriteFileAtomically(path, *text + "\nEXTRA = 1\n", 0644).ok());
  absl::Status fresh = CheckFresh(evidence, copy);
  EXPECT_EQ(fresh.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(fresh.message().find("stale"), std::string::npos) << fresh;
}

TEST(OracleTest, MalformedEvidenceIsRejected) {
  std::string sha(64, 'a');
  auto query = [](const std::string& site) {
    return absl::StrCat(
        R"({"id":"q","path":"a.py","line":1,"column":1,"name":"a","sites":[)",
        site, "]}");
  };
  auto document = [&](const std::string& queries, const std::string& hash) {
    return absl::StrCat(
        R"({"language":"python","oracle":"pyright","fixtureSha256":")", hash,
        R"(","queries":[)", queries, "]}");
  };
  EXPECT_TRUE(ParseEvidence(document(query(R"("b.py:3")"), sha), 1).ok());
  EXPECT_FALSE(ParseEvidence("not json", 1).ok());
  EXPECT_FALSE(ParseEvidence(document(query(R"("b.py")"), sha), 1).ok());
  EXPECT_FALSE(ParseEvidence(document(query(R"("b.py:0")"), sha), 1).ok());
  EXPECT_FALSE(ParseEvidence(document(query("3"), sha), 1).ok());
  EXPECT_FALSE(ParseEvidence(document(query(R"("b.py:3")"), "abc"), 1).ok());
  EXPECT_FALSE(
      ParseEvidence(
          document(query(R"("b.py:3")") + "," + query(R"("c.py:1")"), sha), 1)
          .ok())
      << "duplicate ids";
  EXPECT_FALSE(ParseEvidence(document(query(R"("b.py:3")"), sha), 30).ok())
      << "too few queries";
  EXPECT_FALSE(
      ParseEvidence(
          R"({"language":"python","oracle":"x","fixtureSha256":")" + sha +
              R"(","queries":[{"id":"q","path":"a.py","line":"1","column":1,"name":"a","sites":[]}]})",
          1)
          .ok())
      << "line as a string";
}

TEST(ScorerTest, DuplicatesCollapseAndTheDeclarationIsExcluded) {
  Score score;
  AddToScore({"a.py:3", "a.py:3", "a.py:1", "b.py:2"}, {"a.py:3", "c.py:9"},
             "a.py:1", &score);
  EXPECT_EQ(score.true_positives, 1);
  EXPECT_EQ(score.predicted, 2);  // a.py:3 once, b.py:2; a.py:1 excluded
  EXPECT_EQ(score.expected, 2);
  EXPECT_DOUBLE_EQ(score.precision(), 0.5);
  EXPECT_DOUBLE_EQ(score.recall(), 0.5);
}

TEST(ScorerTest, EmptyPredictions) {
  Score score;
  AddToScore({}, {"a.py:3"}, "a.py:1", &score);
  EXPECT_EQ(score.predicted, 0);
  EXPECT_DOUBLE_EQ(score.precision(), 0.0);
  EXPECT_DOUBLE_EQ(score.recall(), 0.0);
  Score nothing;
  AddToScore({}, {}, "a.py:1", &nothing);
  EXPECT_DOUBLE_EQ(nothing.precision(), 1.0);
  EXPECT_DOUBLE_EQ(nothing.recall(), 1.0);
}

TEST(ScorerTest, AReportUnderAFloorFails) {
  Score score;
  score.true_positives = 89;
  score.predicted = 100;
  score.expected = 89;
  EXPECT_FALSE(CheckFloors(score, kPrecisionFloor, kRecallFloor, "x").ok());
  score.predicted = 95;
  score.expected = 100;  // recall 89%
  EXPECT_FALSE(CheckFloors(score, kPrecisionFloor, kRecallFloor, "x").ok());
  score.expected = 90;
  score.true_positives = 90;  // 90/95 and 90/90
  EXPECT_TRUE(CheckFloors(score, kPrecisionFloor, kRecallFloor, "x").ok());
}

// The naive whole-word search fails the floors on the same data: the test
// can fail.
TEST(OracleTest, NaiveSearchIsUnderTheFloors) {
  for (const std::string language : {"java", "python"}) {
    Evidence evidence = LoadEvidence(language);
    std::string project = JoinPath(DataDir(language), "project");
    auto index = BuildIndex(project);
    ASSERT_TRUE(index.ok());
    Score score;
    for (const OracleQuery& query : evidence.queries) {
      std::vector<std::string> sites;
      for (const Occurrence& o : (*index)->occurrences) {
        if (o.name == query.name) {
          sites.push_back(
              absl::StrCat((*index)->files[o.file].path, ":", o.line));
        }
      }
      AddToScore(sites, query.sites, absl::StrCat(query.path, ":", query.line),
                 &score);
    }
    std::cout << language
              << " identifier tokens with the name, unresolved: precision "
              << 100 * score.precision() << "%, recall " << 100 * score.recall()
              << "%\n";
    EXPECT_FALSE(
        CheckFloors(score, kPrecisionFloor, kRecallFloor, language).ok())
        << language << " identifier-name matching passed the floors";
  }
}

}  // namespace
}  // namespace garuda::knowledge
