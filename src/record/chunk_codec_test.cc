// SPDX-License-Identifier: MIT
#include "record/chunk_codec.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "record/byte_io.h"
#include "record/quantize.h"

namespace gpumon::record {
namespace {

ChunkColumn column(std::uint16_t metric, std::vector<std::int64_t> values,
                   std::vector<std::uint8_t> present = {}) {
  ChunkColumn c;
  c.metric = metric;
  if (present.empty()) present.assign(values.size(), 1);
  c.present = std::move(present);
  c.values = std::move(values);
  for (std::size_t i = 0; i < c.values.size(); ++i)
    if (!c.present[i]) c.values[i] = 0;  // the decoder gives 0 where a value is absent
  return c;
}

ChunkData decode_ok(const std::vector<std::uint8_t>& blob) {
  auto r = decode_chunk(blob);
  if (auto* e = std::get_if<std::string>(&r)) ADD_FAILURE() << *e;
  return std::holds_alternative<ChunkData>(r) ? std::get<ChunkData>(r) : ChunkData{};
}

void expect_same(const ChunkData& a, const ChunkData& b) {
  EXPECT_EQ(a.time_ms, b.time_ms);
  ASSERT_EQ(a.columns.size(), b.columns.size());
  for (std::size_t i = 0; i < a.columns.size(); ++i) {
    EXPECT_EQ(a.columns[i].metric, b.columns[i].metric);
    EXPECT_EQ(a.columns[i].present, b.columns[i].present) << "column " << i;
    EXPECT_EQ(a.columns[i].values, b.columns[i].values) << "column " << i;
  }
}

TEST(ZigZag, MapsSmallMagnitudesToSmallNumbers) {
  EXPECT_EQ(detail::zigzag(0), 0U);
  EXPECT_EQ(detail::zigzag(-1), 1U);
  EXPECT_EQ(detail::zigzag(1), 2U);
  for (std::int64_t v : {std::numeric_limits<std::int64_t>::min(), std::int64_t{-123456789},
                         std::numeric_limits<std::int64_t>::max()})
    EXPECT_EQ(detail::unzigzag(detail::zigzag(v)), v);
}

TEST(ChunkCodec, RoundTripsGaugesCountersMissingValuesAndExtremes) {
  constexpr auto kMin = std::numeric_limits<std::int64_t>::min();
  constexpr auto kMax = std::numeric_limits<std::int64_t>::max();
  ChunkData c;
  c.time_ms = {1764446400000, 1764446401000, 1764446402003, 1764446402990, 1764446404000};
  c.columns.push_back(column(0, {97, 12, 100, 0, 55}));                   // negative deltas
  c.columns.push_back(column(4, {126000000000, 126002097152, 0, 0, 5}));  // large, then small
  c.columns.push_back(column(8, {450123, 0, 451000, 0, 449999}, {1, 0, 1, 0, 1}));  // bitmap
  c.columns.push_back(column(11, {9876543210, 9877193333, 9877843456, 9878493579, 9879143702}));
  c.columns.push_back(column(17, {kMax, kMin, kMax, 0, kMin}));  // wrapping deltas
  c.columns.push_back(column(29, {0, 0, 1, 1, 0}));              // lost from tick 2 to 3
  c.columns.push_back(column(4000, {7, 7, 7, 7, 7}));            // an id from a newer gpumon
  for (auto compression : {ChunkCompression::kNone, ChunkCompression::kZstd})
    expect_same(decode_ok(encode_chunk(c, compression)), c);
}

TEST(ChunkCodec, DropsColumnsWithoutAnyValueAndKeepsAnEmptyChunkEmpty) {
  ChunkData c;
  c.time_ms = {10, 20};
  c.columns.push_back(column(3, {0, 0}, {0, 0}));
  c.columns.push_back(column(5, {1, 2}));
  const ChunkData back = decode_ok(encode_chunk(c));
  ASSERT_EQ(back.columns.size(), 1U);
  EXPECT_EQ(back.columns[0].metric, 5);

  const ChunkData empty = decode_ok(encode_chunk(ChunkData{}));
  EXPECT_TRUE(empty.time_ms.empty());
  EXPECT_TRUE(empty.columns.empty());
}

TEST(ChunkCodec, ConstantAndLinearSeriesCostAboutOneByteATick) {
  ChunkData c;
  for (int i = 0; i < 600; ++i) c.time_ms.push_back(1764446400000 + i * 100);
  std::vector<std::int64_t> energy;
  std::vector<std::int64_t> clock;
  for (int i = 0; i < 600; ++i) {
    energy.push_back(9876543210 + std::int64_t{i} * 65012);
    clock.push_back(1980);
  }
  c.columns.push_back(column(11, energy));
  c.columns.push_back(column(12, clock));
  const auto raw = encode_chunk(c, ChunkCompression::kNone);
  EXPECT_LT(raw.size(), 3U * 600 + 40);     // delta-of-delta makes each series ~1 byte a tick
  EXPECT_LT(encode_chunk(c).size(), 100U);  // and zstd squeezes the runs of zeros
}

TEST(ChunkCodec, RejectsEveryTruncationAndBadHeadersWithAMessage) {
  ChunkData c;
  c.time_ms = {1, 2, 3};
  c.columns.push_back(column(0, {5, 6, 7}, {1, 0, 1}));
  c.columns.push_back(column(9, {-5, 600, -70000}));
  for (auto compression : {ChunkCompression::kNone, ChunkCompression::kZstd}) {
    const auto blob = encode_chunk(c, compression);
    for (std::size_t n = 0; n < blob.size(); ++n) {
      auto r = decode_chunk(std::span(blob.data(), n));
      ASSERT_TRUE(std::holds_alternative<std::string>(r)) << "prefix " << n;
      EXPECT_FALSE(std::get<std::string>(r).empty());
    }
  }
  auto blob = encode_chunk(c, ChunkCompression::kNone);
  auto bad_format = blob;
  bad_format[0] = 9;
  EXPECT_EQ(std::get<std::string>(decode_chunk(bad_format)), "unknown chunk format 9");
  auto bad_compression = blob;
  bad_compression[1] = 7;
  EXPECT_EQ(std::get<std::string>(decode_chunk(bad_compression)), "unknown chunk compression 7");
  blob.push_back(0);
  EXPECT_TRUE(std::holds_alternative<std::string>(decode_chunk(blob)));
}

TEST(ChunkCodec, RefusesHugeDeclaredSizesWithoutAllocating) {
  // Format 1, zstd, raw size 2^40: refused before any allocation.
  const std::vector<std::uint8_t> blob{1, 1, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20};
  EXPECT_EQ(std::get<std::string>(decode_chunk(blob)), "chunk too large");
  // Uncompressed, a tick count of 2^20 with no bytes behind it.
  const std::vector<std::uint8_t> ticks{1, 0, 3, 0x80, 0x80, 0x40};
  EXPECT_TRUE(std::holds_alternative<std::string>(decode_chunk(ticks)));
}

TEST(Quantize, RoundsToTheQuantumAndNeverStoresNaN) {
  EXPECT_EQ(quantize(450.123, 0.001), 450123);
  EXPECT_EQ(dequantize(450123, 0.001), 450.123);
  EXPECT_EQ(quantize(0.12345, 0.0001), 1235);  // rounded to the nearest quantum
  EXPECT_EQ(quantize(-2.5, 1), -3);            // llround rounds half away from zero
  EXPECT_EQ(quantize(150754820096.0, 1), 150754820096);
  EXPECT_EQ(quantize(std::nan(""), 1), std::nullopt);
  EXPECT_EQ(quantize(std::numeric_limits<double>::infinity(), 0.001), std::nullopt);
  EXPECT_EQ(quantize(1e300, 1), std::nullopt);
  EXPECT_EQ(dequantize(-7, 1), -7.0);
}

}  // namespace
}  // namespace gpumon::record
