#include "lib/audit/line_format.h"

#include <fstream>
#include <sstream>

#include "gtest/gtest.h"
#include "lib/audit/test_util.h"
#include "lib/base/json_message.h"
#include "lib/base/sha256.h"

namespace garuda {
namespace {

// The golden vectors: these events, at these times, in a log named
// "golden", must give exactly testdata/golden.jsonl. The hashes in that
// file were checked independently (docs/audit.md shows the python3 check).
std::vector<audit::AuditEvent> GoldenEvents() {
  std::vector<audit::AuditEvent> events;
  audit::AuditEvent a;
  a.set_kind("command");
  a.set_tool("bash");
  a.set_target("sed -i s/a/b/ src/x.ts");
  a.set_decision("allow");
  a.set_reason("rule: Bash(sed:*)");
  events.push_back(a);

  audit::AuditEvent b;
  std::string fields_json =
      R"({"kind":"edit","fields":{"z":[1,2.5,-0,1e300,true,null],"a":{"y":"x","b":-3},"n":9007199254740993}})";
  EXPECT_TRUE(ParseJsonMessage(fields_json, "golden", &b).ok());
  b.set_tool("edit_file");
  b.set_target("src/\"quoted\"\\path\n.ts");
  b.set_decision("ask");
  b.set_reason("caf\xc3\xa9 \x01 tab\t");
  events.push_back(b);

  audit::AuditEvent c;
  c.set_kind("witness_failed");
  events.push_back(c);
  return events;
}

std::string GoldenPath() {
  return std::string(std::getenv("TEST_SRCDIR")) +
         "/garuda/lib/audit/testdata/golden.jsonl";
}

TEST(LineFormatTest, GoldenVectors) {
  std::string content;
  std::string prev = GenesisHash("golden");
  EXPECT_EQ(prev, Sha256Hex("garuda audit genesis v1\ngolden"));
  uint64_t seq = 0;
  for (const audit::AuditEvent& event : GoldenEvents()) {
    ++seq;
    absl::Time time = absl::FromUnixMicros(1795989600123456 + seq * 1000001);
    prev = AppendAuditLine(seq, time, prev, event, &content);
  }
  std::ifstream file(GoldenPath(), std::ios::binary);
  ASSERT_TRUE(file.good()) << GoldenPath();
  std::stringstream golden;
  golden << file.rdbuf();
  EXPECT_EQ(content, golden.str());
  if (content != golden.str()) {
    std::ofstream(std::string(std::getenv("TEST_UNDECLARED_OUTPUTS_DIR")) +
                  "/golden.jsonl")
        << content;
  }
  // Each stored hash is SHA-256 of the line without its hash member.
  for (const std::string& line : SplitLines(golden.str())) {
    size_t member = line.rfind(",\"hash\":\"");
    ASSERT_NE(member, std::string::npos);
    std::string stored = line.substr(member + 9, 64);
    std::string rest = line.substr(0, member) + "}";
    EXPECT_EQ(Sha256Hex(rest), stored);
    EXPECT_EQ(ParseAuditLine(line.substr(0, line.size() - 1)).kind,
              ParsedLine::Kind::kOk);
  }
}

TEST(LineFormatTest, TimeFormat) {
  EXPECT_EQ(FormatAuditTime(absl::FromUnixMicros(1795989600123456)),
            "2026-11-29T22:00:00.123456Z");
  EXPECT_EQ(FormatAuditTime(absl::FromUnixMicros(1795989601000007)),
            "2026-11-29T22:00:01.000007Z");
  EXPECT_EQ(FormatAuditTime(absl::FromUnixMicros(-1)),
            "1969-12-31T23:59:59.999999Z");
  for (int64_t micros :
       {int64_t{0}, int64_t{1795989600999999}, int64_t{951782400000001}}) {
    absl::Time time = absl::FromUnixMicros(micros);
    EXPECT_EQ(
        FormatAuditTime(time),
        absl::FormatTime("%Y-%m-%dT%H:%M:%E6SZ", time, absl::UTCTimeZone()));
  }
}

TEST(LineFormatTest, EventNeedsKindAndUtf8) {
  audit::AuditEvent event;
  EXPECT_FALSE(ValidateEvent(event).ok());
  event.set_kind("x");
  EXPECT_TRUE(ValidateEvent(event).ok());
  // Lines stay under kMaxAuditLineBytes, counted after escaping.
  event.set_target(std::string(200 * 1024, 'a'));
  EXPECT_TRUE(ValidateEvent(event).ok());
  event.set_target(std::string(200 * 1024, '\x01'));
  EXPECT_NE(ValidateEvent(event).message().find("over the limit"),
            absl::string_view::npos);
  event.set_target("bad \xff utf8");
  absl::Status status = ValidateEvent(event);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("target"), absl::string_view::npos);
}

TEST(LineFormatTest, ParsedKinds) {
  std::string content = TestLog("kinds", 1);
  std::string line = content.substr(0, content.size() - 1);
  EXPECT_EQ(ParseAuditLine(line).kind, ParsedLine::Kind::kOk);
  EXPECT_EQ(ParseAuditLine("not json").kind, ParsedLine::Kind::kNotJson);
  EXPECT_EQ(ParseAuditLine(R"({"v":2,"seq":1})").kind,
            ParsedLine::Kind::kUnknownVersion);
  EXPECT_EQ(ParseAuditLine(R"({"seq":1,"v":1})").kind,
            ParsedLine::Kind::kBadLayout);
  std::string changed = line;
  changed[changed.find("secret")] = 'S';
  EXPECT_EQ(ParseAuditLine(changed).kind, ParsedLine::Kind::kBadHash);
  // Invalid UTF-8 and escapes the writer never writes are found before the
  // hash, so a recomputed hash does not make them pass.
  changed = line;
  changed[changed.find("secret")] = '\xff';
  EXPECT_EQ(ParseAuditLine(changed).kind, ParsedLine::Kind::kBadUtf8);
  changed = line;
  changed.replace(changed.find("secret"), 1, "\\u0073");
  EXPECT_EQ(ParseAuditLine(changed).kind, ParsedLine::Kind::kBadLayout);
  changed = line;
  changed.replace(changed.find("secret"), 1, "\\/");
  EXPECT_EQ(ParseAuditLine(changed).kind, ParsedLine::Kind::kBadLayout);
}

TEST(LineFormatTest, JsonChecker) {
  EXPECT_TRUE(IsJsonValue(R"({"a":[1,-2.5e3,"x\u00e9",true,false,null,{}]})"));
  EXPECT_FALSE(IsJsonValue(R"({"a":1,})"));
  EXPECT_FALSE(IsJsonValue(R"({"a":01})"));
  EXPECT_FALSE(IsJsonValue("\"a\nb\""));
  EXPECT_FALSE(IsJsonValue(std::string(100, '[') + std::string(100, ']')));
}

}  // namespace
}  // namespace garuda
