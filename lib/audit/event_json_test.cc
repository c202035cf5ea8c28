#include "lib/audit/event_json.h"

#include "gtest/gtest.h"
#include "lib/audit/line_format.h"
#include "lib/base/json_message.h"

namespace garuda {
namespace {

std::string Canonical(const audit::AuditEvent& event) {
  std::string out;
  AppendCanonicalEvent(event, &out);
  return out;
}

// The fast reader and lib/base's general reader agree on what they accept
// and on what they read.
TEST(EventJsonTest, AgreesWithTheGeneralReader) {
  const char* inputs[] = {
      R"({"kind":"command"})",
      R"( { "kind" : "edit", "tool":"edit_file", "target":"a\"b\\c\n\u00e9\ud83d\ude00",
          "decision":"ask","reason":"x/y\/z", "fields": {"b":[1,-2.5,1e3,true,false,null,{"c":"d"}],"a":{}} } )",
      R"({"kind":"x","tool":null,"fields":null})",
      R"({"kind":"x","fields":{"n":-0.0,"big":12345678901234567890}})",
  };
  for (const char* input : inputs) {
    audit::AuditEvent fast, general;
    ASSERT_TRUE(ParseEventJson(input, &fast).ok()) << input;
    ASSERT_TRUE(ParseJsonMessage(input, "test", &general).ok()) << input;
    EXPECT_EQ(Canonical(fast), Canonical(general)) << input;
  }
}

TEST(EventJsonTest, RefusesWhatTheGeneralReaderRefuses) {
  const char* inputs[] = {
      R"({"kind":"x","tagret":"y"})",
      R"({"kind":1})",
      R"({"kind":"x","fields":[1]})",
      R"({"kind":"x","fields":"s"})",
      R"({"kind":"x"} trailing)",
      "not json",
      R"(["kind"])",
      R"({"kind":"x","fields":{"a":01}})",
      R"({"kind":"\ud800"})",
      "",
  };
  for (const char* input : inputs) {
    audit::AuditEvent fast, general;
    EXPECT_FALSE(ParseEventJson(input, &fast).ok()) << input;
    EXPECT_FALSE(ParseJsonMessage(input, "test", &general).ok()) << input;
  }
}

// RFC 8259 forbids these; protobuf's reader lets them through.
TEST(EventJsonTest, StricterThanProtobufWhereTheRfcIs) {
  audit::AuditEvent event;
  EXPECT_FALSE(ParseEventJson(R"({"kind":"x",})", &event).ok());
  EXPECT_FALSE(ParseEventJson("{\"kind\":\"a\tb\"}", &event).ok());
}

TEST(EventJsonTest, MessagesNameTheField) {
  audit::AuditEvent event;
  absl::Status status = ParseEventJson(R"({"kind":"x","tagret":"y"})", &event);
  EXPECT_EQ(status.message(), "unknown field \"tagret\"");
  status = ParseEventJson(R"({"kind":"x","tool":3})", &event);
  EXPECT_EQ(status.message(), "field \"tool\" must be a string, not a number");
  status = ParseEventJson(R"({"kind":"x","kind":"y"})", &event);
  EXPECT_EQ(status.message(), "field \"kind\" appears twice");
  status = ParseEventJson("not json", &event);
  EXPECT_EQ(status.message(), "not a JSON object: expected '{' at byte 1");
}

}  // namespace
}  // namespace garuda
