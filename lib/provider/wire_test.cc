// The two wire formats without a network: request bodies, and decoders fed
// events by hand (the stream cases the scripted servers do not produce).
#include "lib/provider/wire.h"

#include "gtest/gtest.h"

namespace garuda {
namespace provider {
namespace {

absl::Status Feed(StreamDecoder& decoder, const std::string& data,
                  const std::string& event = "") {
  return decoder.OnEvent(SseEvent{event, data});
}

TEST(OpenAiDecoderTest, InterleavedToolCallDeltasAreAssembledByIndex) {
  std::string streamed;
  auto decoder = OpenAiWireFormat()->NewDecoder([&](absl::string_view text) {
    streamed.append(text.data(), text.size());
  });
  ASSERT_TRUE(
      Feed(
          *decoder,
          R"({"choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"}}]})")
          .ok());
  ASSERT_TRUE(
      Feed(
          *decoder,
          R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"bash","arguments":"{\"co"}}]}}]})")
          .ok());
  ASSERT_TRUE(
      Feed(
          *decoder,
          R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"b","function":{"name":"grep","arguments":"{}"}}]}}]})")
          .ok());
  ASSERT_TRUE(
      Feed(
          *decoder,
          R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"mmand\":\"ls\"}"}}]}}]})")
          .ok());
  EXPECT_FALSE(decoder->complete());
  ASSERT_TRUE(
      Feed(
          *decoder,
          R"({"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}],"usage":null})")
          .ok());
  EXPECT_TRUE(decoder->complete());  // also without [DONE]
  ModelResponse response = decoder->Response();
  EXPECT_EQ(streamed, "Hi");
  EXPECT_EQ(response.stop_reason(), "tool_use");
  ASSERT_EQ(response.tool_calls_size(), 2);
  EXPECT_EQ(response.tool_calls(0).arguments_json(), R"({"command":"ls"})");
  EXPECT_EQ(response.tool_calls(1).name(), "grep");
  EXPECT_FALSE(response.usage_reported());  // none arrived
}

TEST(OpenAiDecoderTest, UsageInTheFinishChunkCountsAndATotalMustAddUp) {
  auto decoder = OpenAiWireFormat()->NewDecoder(nullptr);
  // llama.cpp puts the usage in the chunk with finish_reason.
  ASSERT_TRUE(
      Feed(
          *decoder,
          R"({"choices":[{"index":0,"delta":{},"finish_reason":"length"}],"usage":{"prompt_tokens":5,"completion_tokens":7,"total_tokens":12}})")
          .ok());
  ASSERT_TRUE(Feed(*decoder, "[DONE]").ok());
  ModelResponse response = decoder->Response();
  EXPECT_TRUE(response.usage_reported());
  EXPECT_EQ(response.stop_reason(), "max_tokens");

  auto wrong = OpenAiWireFormat()->NewDecoder(nullptr);
  ASSERT_TRUE(
      Feed(
          *wrong,
          R"({"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":7,"total_tokens":99}})")
          .ok());
  EXPECT_FALSE(wrong->Response().usage_reported());
  auto fractional = OpenAiWireFormat()->NewDecoder(nullptr);
  ASSERT_TRUE(
      Feed(
          *fractional,
          R"({"choices":[],"usage":{"prompt_tokens":5.5,"completion_tokens":7}})")
          .ok());
  EXPECT_FALSE(fractional->Response().usage_reported());
}

TEST(OpenAiDecoderTest, ToolCallsEndedWithStopAreToolUse) {
  // Ollama's OpenAI endpoint.
  auto decoder = OpenAiWireFormat()->NewDecoder(nullptr);
  ASSERT_TRUE(
      Feed(
          *decoder,
          R"({"choices":[{"index":0,"delta":{"tool_calls":[{"id":"x","function":{"name":"bash","arguments":{}}}]},"finish_reason":"stop"}]})")
          .ok());
  ModelResponse response = decoder->Response();
  EXPECT_EQ(response.stop_reason(), "tool_use");
  ASSERT_EQ(response.tool_calls_size(), 1);
  EXPECT_EQ(response.tool_calls(0).name(), "bash");
}

TEST(OpenAiDecoderTest, AnErrorChunkAbortsAndIsKept) {
  auto decoder = OpenAiWireFormat()->NewDecoder(nullptr);
  absl::Status status =
      Feed(*decoder, R"({"error":{"type":"server_error","message":"boom"}})");
  EXPECT_EQ(status.code(), absl::StatusCode::kAborted);
  ASSERT_TRUE(decoder->stream_error().has_value());
  EXPECT_EQ(decoder->stream_error()->message, "boom");
  EXPECT_EQ(Feed(*decoder, "not json").code(), absl::StatusCode::kDataLoss);
}

TEST(AnthropicDecoderTest, UsageNeedsTheFinalOutputCount) {
  auto decoder = AnthropicWireFormat()->NewDecoder(nullptr);
  ASSERT_TRUE(
      Feed(
          *decoder,
          R"({"type":"message_start","message":{"model":"m","usage":{"input_tokens":40,"cache_read_input_tokens":100,"cache_creation_input_tokens":3,"output_tokens":1}}})")
          .ok());
  ASSERT_TRUE(
      Feed(
          *decoder,
          R"({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}})")
          .ok());
  ASSERT_TRUE(
      Feed(
          *decoder,
          R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"ok"}})")
          .ok());
  // Cut here: input only, a partial usage.
  EXPECT_FALSE(decoder->Response().usage_reported());
  EXPECT_FALSE(decoder->complete());
  ASSERT_TRUE(
      Feed(
          *decoder,
          R"({"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":5}})")
          .ok());
  ASSERT_TRUE(
      Feed(*decoder,
           R"({"type":"message_delta","delta":{},"usage":{"output_tokens":9}})")
          .ok());
  ASSERT_TRUE(Feed(*decoder, R"({"type":"message_stop"})").ok());
  ModelResponse response = decoder->Response();
  EXPECT_TRUE(decoder->complete());
  EXPECT_TRUE(response.usage_reported());
  EXPECT_EQ(response.usage().input_tokens(), 40);
  EXPECT_EQ(response.usage().output_tokens(), 9);  // cumulative: the last
  EXPECT_EQ(response.usage().cache_read_tokens(), 100);
  EXPECT_EQ(response.usage().cache_write_tokens(), 3);
  EXPECT_EQ(response.stop_reason(), "end_turn");
  EXPECT_EQ(response.text(), "ok");
}

TEST(AnthropicDecoderTest, AnInvalidCountMakesTheUsageUnreported) {
  auto decoder = AnthropicWireFormat()->NewDecoder(nullptr);
  ASSERT_TRUE(
      Feed(
          *decoder,
          R"({"type":"message_start","message":{"usage":{"input_tokens":"40"}}})")
          .ok());
  ASSERT_TRUE(
      Feed(
          *decoder,
          R"({"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":5}})")
          .ok());
  EXPECT_FALSE(decoder->Response().usage_reported());
}

TEST(AnthropicDecoderTest, ToolInputFromDeltasOrFromTheStart) {
  auto decoder = AnthropicWireFormat()->NewDecoder(nullptr);
  ASSERT_TRUE(
      Feed(
          *decoder,
          R"({"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"t1","name":"bash","input":{}}})")
          .ok());
  ASSERT_TRUE(
      Feed(
          *decoder,
          R"({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"command\": "}})")
          .ok());
  ASSERT_TRUE(
      Feed(
          *decoder,
          R"({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"\"pwd\"}"}})")
          .ok());
  ASSERT_TRUE(
      Feed(
          *decoder,
          R"({"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"t2","name":"list_files","input":{"path":"src"}}})")
          .ok());
  ASSERT_TRUE(
      Feed(
          *decoder,
          R"({"type":"content_block_start","index":3,"content_block":{"type":"tool_use","id":"t3","name":"noargs","input":{}}})")
          .ok());
  ModelResponse response = decoder->Response();
  ASSERT_EQ(response.tool_calls_size(), 3);
  EXPECT_EQ(response.tool_calls(0).arguments_json(), R"({"command": "pwd"})");
  EXPECT_EQ(response.tool_calls(1).arguments_json(), R"({"path":"src"})");
  EXPECT_EQ(response.tool_calls(2).arguments_json(), "{}");
}

TEST(AnthropicDecoderTest, AnErrorEventAfterHttp200) {
  auto decoder = AnthropicWireFormat()->NewDecoder(nullptr);
  EXPECT_EQ(
      Feed(
          *decoder,
          R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})",
          "error")
          .code(),
      absl::StatusCode::kAborted);
  EXPECT_EQ(decoder->stream_error()->type, "overloaded_error");
}

ModelRequest Conversation() {
  ModelRequest request;
  request.set_system("sys");
  ChatMessage* user = request.add_messages();
  user->set_role("user");
  user->set_text("run ls");
  ChatMessage* assistant = request.add_messages();
  assistant->set_role("assistant");
  ToolCall* call = assistant->add_tool_calls();
  call->set_id("c1");
  call->set_name("bash");
  call->set_arguments_json(R"({"command":"ls"})");
  ChatMessage* results = request.add_messages();
  results->set_role("user");
  ToolResult* result = results->add_tool_results();
  result->set_tool_call_id("c1");
  result->set_content("a.txt");
  result->set_is_error(true);
  return request;
}

TEST(WireBodyTest, OpenAiConversation) {
  auto body = OpenAiWireFormat()->Body(Conversation(), "m", 512);
  ASSERT_TRUE(body.ok()) << body.status();
  auto json = ParseJson(*body, "body");
  ASSERT_TRUE(json.ok());
  const auto* messages = ListMember(*json, "messages");
  ASSERT_EQ(messages->values_size(), 4);
  EXPECT_EQ(StringMember(messages->values(0), "role"), "system");
  EXPECT_EQ(Member(messages->values(2), "content")->kind_case(),
            Value::kNullValue);
  const Value& call = ListMember(messages->values(2), "tool_calls")->values(0);
  EXPECT_EQ(StringMember(*ObjectMember(call, "function"), "arguments"),
            R"({"command":"ls"})");
  EXPECT_EQ(StringMember(messages->values(3), "role"), "tool");
  EXPECT_EQ(StringMember(messages->values(3), "tool_call_id"), "c1");
  EXPECT_EQ(StringMember(messages->values(3), "content"), "Error: a.txt");
  EXPECT_EQ(TokenCountMember(*json, "max_tokens"), 512);
}

TEST(WireBodyTest, OpenAiSaysErrorOnce) {
  ModelRequest request = Conversation();
  request.mutable_messages(2)->mutable_tool_results(0)->set_content(
      "Error: read_file: no such file");
  auto body = OpenAiWireFormat()->Body(request, "m", 512);
  ASSERT_TRUE(body.ok()) << body.status();
  auto json = ParseJson(*body, "body");
  ASSERT_TRUE(json.ok());
  EXPECT_EQ(StringMember(ListMember(*json, "messages")->values(3), "content"),
            "Error: read_file: no such file");
}

TEST(WireBodyTest, AnthropicConversation) {
  auto body = AnthropicWireFormat()->Body(Conversation(), "m", 512);
  ASSERT_TRUE(body.ok()) << body.status();
  auto json = ParseJson(*body, "body");
  ASSERT_TRUE(json.ok());
  EXPECT_EQ(StringMember(*json, "system"), "sys");
  const auto* messages = ListMember(*json, "messages");
  ASSERT_EQ(messages->values_size(), 3);
  const Value& use = ListMember(messages->values(1), "content")->values(0);
  EXPECT_EQ(StringMember(use, "type"), "tool_use");
  EXPECT_EQ(StringMember(*ObjectMember(use, "input"), "command"), "ls");
  const Value& result = ListMember(messages->values(2), "content")->values(0);
  EXPECT_EQ(StringMember(result, "type"), "tool_result");
  EXPECT_TRUE(Member(result, "is_error")->bool_value());
}

TEST(WireBodyTest, RequestsThatCannotBeSentNameTheirPart) {
  ModelRequest request = Conversation();
  request.mutable_messages(1)->mutable_tool_calls(0)->set_arguments_json("[1]");
  auto body = AnthropicWireFormat()->Body(request, "m", 1);
  ASSERT_FALSE(body.ok());
  EXPECT_NE(body.status().message().find("tool call c1"), std::string::npos);

  request = Conversation();
  request.mutable_messages(0)->set_role("system");
  EXPECT_FALSE(OpenAiWireFormat()->Body(request, "m", 1).ok());

  request = Conversation();
  ToolDefinition* tool = request.add_tools();
  tool->set_name("broken");
  tool->set_parameters_json("{nope");
  body = OpenAiWireFormat()->Body(request, "m", 1);
  ASSERT_FALSE(body.ok());
  EXPECT_NE(body.status().message().find("tool broken"), std::string::npos);
}

TEST(WireTest, EndpointsAndErrorBodies) {
  EXPECT_EQ(OpenAiWireFormat()->Endpoint("http://localhost:8080/v1/"),
            "http://localhost:8080/v1/chat/completions");
  EXPECT_EQ(AnthropicWireFormat()->Endpoint("https://api.anthropic.com"),
            "https://api.anthropic.com/v1/messages");
  EXPECT_EQ(ErrorBodyMessage(R"({"error":{"type":"t","message":"m"}})"),
            "t: m");
  EXPECT_EQ(ErrorBodyMessage(R"({"error":"model not loaded"})"),
            "model not loaded");
  EXPECT_EQ(ErrorBodyMessage("  <html>bad gateway</html> "),
            "<html>bad gateway</html>");
  EXPECT_EQ(ErrorBodyMessage(""), "(empty body)");
}

}  // namespace
}  // namespace provider
}  // namespace garuda
