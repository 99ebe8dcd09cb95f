#include "kubeslurm/kube/watch_framing.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace kubeslurm::kube {
namespace {

std::string event(std::string_view type, std::string_view name, std::string_view rv) {
  return std::string(R"({"type":")") + std::string(type) +
         R"(","object":{"kind":"ConfigMap","metadata":{"name":")" + std::string(name) +
         R"(","resourceVersion":")" + std::string(rv) + "\"}}}\n";
}

const std::string kStream = event("ADDED", "a", "10") + "\n" + event("MODIFIED", "a", "11") +
                            R"({"type":"BOOKMARK","object":{"kind":"ConfigMap","metadata":)"
                            R"({"resourceVersion":"15"}}})"
                            "\r\n" +
                            event("DELETED", "a", "16");

std::vector<WatchEvent> decodeInPieces(const std::string& stream,
                                       const std::vector<std::size_t>& cuts,
                                       WatchDecoder& decoder) {
  std::vector<WatchEvent> events;
  std::size_t from = 0;
  for (const std::size_t cut : cuts) {
    EXPECT_TRUE(decoder.feed(std::string_view(stream).substr(from, cut - from), events).isOk());
    from = cut;
  }
  EXPECT_TRUE(decoder.feed(std::string_view(stream).substr(from), events).isOk());
  return events;
}

void expectStreamEvents(const std::vector<WatchEvent>& events) {
  ASSERT_EQ(events.size(), 4U);
  EXPECT_EQ(events[0].type, WatchEventType::kAdded);
  EXPECT_EQ(events[1].type, WatchEventType::kModified);
  EXPECT_EQ(events[2].type, WatchEventType::kBookmark);
  EXPECT_EQ(events[3].type, WatchEventType::kDeleted);
  EXPECT_EQ(events[0].object["metadata"]["name"], "a");
  EXPECT_EQ(events[2].resourceVersion(), "15");
}

TEST(WatchDecoderTest, WholeStreamInOneChunkYieldsEventsInOrder) {
  WatchDecoder decoder;
  std::vector<WatchEvent> events;
  ASSERT_TRUE(decoder.feed(kStream, events).isOk());
  expectStreamEvents(events);
  EXPECT_EQ(decoder.resourceVersion(), "16");
  EXPECT_TRUE(decoder.finish().isOk());
}

TEST(WatchDecoderTest, EverySplitPointGivesTheSameEvents) {
  for (std::size_t cut = 0; cut <= kStream.size(); ++cut) {
    WatchDecoder decoder;
    auto events = decodeInPieces(kStream, {cut}, decoder);
    SCOPED_TRACE("cut at " + std::to_string(cut));
    expectStreamEvents(events);
    EXPECT_EQ(decoder.resourceVersion(), "16");
    EXPECT_TRUE(decoder.finish().isOk());
  }
}

TEST(WatchDecoderTest, EveryPairOfSplitPointsGivesTheSameEvents) {
  const std::string stream = event("ADDED", "x", "1") + event("DELETED", "x", "2");
  for (std::size_t first = 0; first <= stream.size(); ++first) {
    for (std::size_t second = first; second <= stream.size(); ++second) {
      WatchDecoder decoder;
      auto events = decodeInPieces(stream, {first, second}, decoder);
      ASSERT_EQ(events.size(), 2U) << first << "," << second;
      EXPECT_EQ(events[1].type, WatchEventType::kDeleted);
      EXPECT_EQ(decoder.resourceVersion(), "2");
    }
  }
}

TEST(WatchDecoderTest, OneByteAtATime) {
  WatchDecoder decoder;
  std::vector<WatchEvent> events;
  for (const char c : kStream) ASSERT_TRUE(decoder.feed(std::string_view(&c, 1), events).isOk());
  expectStreamEvents(events);
}

TEST(WatchDecoderTest, HugeObjectInSmallChunks) {
  const std::string big(8U << 20U, 'x');  // 8 MiB of data in one ConfigMap
  const std::string line = R"({"type":"ADDED","object":{"metadata":{"resourceVersion":"7"},)"
                           R"("data":{"big":")" +
                           big + "\"}}}\n";
  WatchDecoder decoder;
  std::vector<WatchEvent> events;
  constexpr std::size_t kChunk = 4096;  // 2048 chunks: linear scanning keeps this fast
  for (std::size_t at = 0; at < line.size(); at += kChunk) {
    ASSERT_TRUE(decoder.feed(std::string_view(line).substr(at, kChunk), events).isOk());
  }
  ASSERT_EQ(events.size(), 1U);
  EXPECT_EQ(events[0].object["data"]["big"].get_ref<const std::string&>().size(), big.size());
  EXPECT_EQ(decoder.resourceVersion(), "7");
  EXPECT_EQ(decoder.buffered(), 0U);
}

TEST(WatchDecoderTest, OverlongLineIsRefusedNotBufferedForever) {
  WatchDecoder decoder(/*maxLineBytes=*/100);
  std::vector<WatchEvent> events;
  Status status = decoder.feed(std::string(200, 'x'), events);
  EXPECT_EQ(status.code(), StatusCode::kResourceExhausted);
}

TEST(WatchDecoderTest, TrailingPartialLineIsTruncationNotAnEvent) {
  WatchDecoder decoder;
  std::vector<WatchEvent> events;
  std::string stream = event("ADDED", "a", "3");
  std::string partial = event("MODIFIED", "a", "4");
  partial.pop_back();  // a complete JSON object, but the newline never came
  ASSERT_TRUE(decoder.feed(stream + partial, events).isOk());
  EXPECT_EQ(events.size(), 1U);
  Status end = decoder.finish();
  EXPECT_EQ(end.code(), StatusCode::kDataLoss);
  EXPECT_NE(end.message().find("truncated"), std::string::npos);
  EXPECT_EQ(decoder.resourceVersion(), "3");
}

TEST(WatchDecoderTest, BlankLinesAndCrlfAreIgnored) {
  WatchDecoder decoder;
  std::vector<WatchEvent> events;
  ASSERT_TRUE(decoder.feed("\n\r\n  \n", events).isOk());
  EXPECT_TRUE(events.empty());
  EXPECT_TRUE(decoder.finish().isOk());
}

TEST(WatchDecoderTest, ErrorEventWithGoneMapsToOutOfRangeAndKeepsResumePoint) {
  WatchDecoder decoder;
  decoder.setResourceVersion("100");
  std::vector<WatchEvent> events;
  const std::string error =
      R"({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},)"
      R"x("status":"Failure","message":"too old resource version: 5 (100)","reason":"Expired",)x"
      R"("code":410}})"
      "\n";
  ASSERT_TRUE(decoder.feed(error, events).isOk());
  ASSERT_EQ(events.size(), 1U);
  EXPECT_EQ(events[0].type, WatchEventType::kError);
  const Status status = events[0].errorStatus();
  EXPECT_EQ(status.code(), StatusCode::kOutOfRange);
  EXPECT_NE(status.message().find("too old resource version"), std::string::npos);
  EXPECT_EQ(decoder.resourceVersion(), "100");
}

TEST(WatchDecoderTest, ErrorEventWithoutCodeIsStillAnError) {
  auto parsed = parseWatchEvent(R"({"type":"ERROR","object":{"kind":"Status"}})");
  ASSERT_TRUE(parsed.isOk());
  EXPECT_FALSE(parsed->errorStatus().isOk());
}

TEST(WatchDecoderTest, BookmarkAdvancesResumePointOnly) {
  WatchDecoder decoder;
  std::vector<WatchEvent> events;
  ASSERT_TRUE(decoder
                  .feed(R"({"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1",)"
                        R"("metadata":{"resourceVersion":"12345"}}})"
                        "\n",
                        events)
                  .isOk());
  ASSERT_EQ(events.size(), 1U);
  EXPECT_EQ(events[0].type, WatchEventType::kBookmark);
  EXPECT_TRUE(events[0].errorStatus().isOk());
  EXPECT_EQ(decoder.resourceVersion(), "12345");
}

struct BadLine {
  const char* name;
  const char* line;
};

class WatchDecoderBadLineTest : public testing::TestWithParam<BadLine> {};

TEST_P(WatchDecoderBadLineTest, MalformedLineIsDataLossAndSticky) {
  WatchDecoder decoder;
  std::vector<WatchEvent> events;
  const std::string stream =
      event("ADDED", "ok", "1") + GetParam().line + "\n" + event("ADDED", "after", "2");
  Status status = decoder.feed(stream, events);
  EXPECT_EQ(status.code(), StatusCode::kDataLoss);
  ASSERT_EQ(events.size(), 1U);  // the event before the bad line is delivered
  EXPECT_EQ(decoder.resourceVersion(), "1");
  EXPECT_EQ(decoder.feed(event("ADDED", "later", "3"), events).code(), StatusCode::kDataLoss);
  EXPECT_EQ(events.size(), 1U);
}

INSTANTIATE_TEST_SUITE_P(
    Lines, WatchDecoderBadLineTest,
    testing::Values(BadLine{"NotJson", "{not json"}, BadLine{"Array", "[1,2]"},
                    BadLine{"NoType", R"({"object":{}})"},
                    BadLine{"UnknownType", R"({"type":"EXPLODED","object":{}})"},
                    BadLine{"TypeNotString", R"({"type":3,"object":{}})"},
                    BadLine{"NoObject", R"({"type":"ADDED"})"},
                    BadLine{"ObjectNotObject", R"({"type":"ADDED","object":"x"})"}),
    [](const testing::TestParamInfo<BadLine>& param) { return param.param.name; });

}  // namespace
}  // namespace kubeslurm::kube
