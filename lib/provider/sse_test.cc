#include "lib/provider/sse.h"

#include <vector>

#include "gtest/gtest.h"

namespace garuda {
namespace provider {
namespace {

class SseTest : public ::testing::Test {
 protected:
  SseParser parser_{[this](const SseEvent& event) {
    events_.push_back(event);
    return absl::OkStatus();
  }};
  std::vector<SseEvent> events_;
};

TEST_F(SseTest, EventsWithNamesAndData) {
  ASSERT_TRUE(parser_
                  .Feed("event: message_start\ndata: {\"a\":1}\n\n"
                        "data: second\n\n")
                  .ok());
  ASSERT_EQ(events_.size(), 2u);
  EXPECT_EQ(events_[0].event, "message_start");
  EXPECT_EQ(events_[0].data, "{\"a\":1}");
  EXPECT_EQ(events_[1].event, "");
  EXPECT_EQ(events_[1].data, "second");
  EXPECT_TRUE(parser_.Finish());
}

TEST_F(SseTest, AnySplitOfTheBytesGivesTheSameEvents) {
  const std::string stream =
      "\xEF\xBB\xBF: comment\r\nevent: x\r\ndata: one\r\ndata:two\r\n\r\n"
      "data: three\r\r";
  for (size_t cut = 0; cut <= stream.size(); ++cut) {
    events_.clear();
    SseParser parser([this](const SseEvent& event) {
      events_.push_back(event);
      return absl::OkStatus();
    });
    ASSERT_TRUE(parser.Feed(stream.substr(0, cut)).ok());
    ASSERT_TRUE(parser.Feed(stream.substr(cut)).ok());
    ASSERT_EQ(events_.size(), 2u) << "cut at " << cut;
    EXPECT_EQ(events_[0].event, "x");
    EXPECT_EQ(events_[0].data, "one\ntwo");
    EXPECT_EQ(events_[1].data, "three");
  }
}

TEST_F(SseTest, OneByteAtATime) {
  const std::string stream = "data: a\n\ndata: b\n\n";
  for (char c : stream) ASSERT_TRUE(parser_.Feed(std::string(1, c)).ok());
  ASSERT_EQ(events_.size(), 2u);
  EXPECT_EQ(events_[1].data, "b");
}

TEST_F(SseTest, AnUnfinishedEventIsNotDispatched) {
  ASSERT_TRUE(parser_.Feed("data: half").ok());
  EXPECT_TRUE(events_.empty());
  EXPECT_FALSE(parser_.Finish());
}

TEST_F(SseTest, IdRetryAndCommentsAreIgnored) {
  ASSERT_TRUE(parser_.Feed(": ping\nid: 4\nretry: 100\n\ndata: x\n\n").ok());
  ASSERT_EQ(events_.size(), 1u);
  EXPECT_EQ(events_[0].data, "x");
}

TEST_F(SseTest, HandlerErrorStopsTheParse) {
  int calls = 0;
  SseParser parser([&](const SseEvent&) {
    ++calls;
    return absl::AbortedError("stop");
  });
  EXPECT_EQ(parser.Feed("data: 1\n\ndata: 2\n\n").code(),
            absl::StatusCode::kAborted);
  EXPECT_EQ(calls, 1);
  EXPECT_FALSE(parser.Feed("data: 3\n\n").ok());
}

TEST_F(SseTest, OverlongLineIsAnError) {
  SseParser parser([](const SseEvent&) { return absl::OkStatus(); }, 16);
  EXPECT_EQ(parser.Feed("data: " + std::string(64, 'x')).code(),
            absl::StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace provider
}  // namespace garuda
