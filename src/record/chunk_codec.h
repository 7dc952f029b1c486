// SPDX-License-Identifier: MIT
// The sample-chunk format: the samples of one GPU over a stretch of time, stored column by
// column as quantised integers, delta (or delta-of-delta) and zig-zag varint encoded, then
// compressed with zstd. docs/recording.md describes the bytes.
//
// Thread-safety: pure functions over their arguments.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <variant>
#include <vector>

namespace gpumon::record {

/// Bounds the decoder enforces (and the writer stays within).
inline constexpr std::size_t kMaxChunkTicks = 4096;
inline constexpr std::size_t kMaxChunkRawBytes = 1 << 20;
inline constexpr std::uint8_t kChunkFormat = 1;

struct ChunkColumn {
  std::uint16_t metric = 0;           ///< MetricId (unknown ids from newer writers are kept)
  std::vector<std::uint8_t> present;  ///< one per tick: 1 when the value exists
  std::vector<std::int64_t> values;   ///< one per tick, in units of the metric's quantum
};

/// One GPU's samples: ticks in time order; columns in ascending metric order, each holding a
/// value for at least one tick (the encoder drops columns that are missing throughout).
struct ChunkData {
  std::vector<std::int64_t> time_ms;  ///< wall time, ms since the Unix epoch
  std::vector<ChunkColumn> columns;
};

enum class ChunkCompression : std::uint8_t { kNone = 0, kZstd = 1 };

/// zstd levels: a chunk still growing is rewritten at every commit (cheap level); a full one is
/// written once more at the strong level.
inline constexpr int kZstdLevelOpen = 3;
inline constexpr int kZstdLevelFinal = 9;

/// Encodes `chunk` (every column as long as time_ms; at most kMaxChunkTicks ticks).
std::vector<std::uint8_t> encode_chunk(const ChunkData& chunk,
                                       ChunkCompression compression = ChunkCompression::kZstd,
                                       int zstd_level = kZstdLevelFinal);

/// A decoded chunk, or why the bytes are not one. Never crashes on any input.
using ChunkDecodeResult = std::variant<ChunkData, std::string>;
ChunkDecodeResult decode_chunk(std::span<const std::uint8_t> blob);

}  // namespace gpumon::record
