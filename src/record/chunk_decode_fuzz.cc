// SPDX-License-Identifier: MIT
// libFuzzer target: the sample-chunk decoder must reject any bytes with a message, never crash,
// never allocate without bound; whatever it accepts must encode and decode back to itself.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "record/chunk_codec.h"

// NOLINTNEXTLINE(readability-identifier-naming): libFuzzer's entry point
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto decoded = gpumon::record::decode_chunk(std::span(data, size));
  auto* chunk = std::get_if<gpumon::record::ChunkData>(&decoded);
  if (!chunk) return 0;
  for (const auto& c : chunk->columns)
    if (c.values.size() != chunk->time_ms.size() || c.present.size() != chunk->time_ms.size())
      std::abort();
  for (auto compression :
       {gpumon::record::ChunkCompression::kNone, gpumon::record::ChunkCompression::kZstd}) {
    auto again = gpumon::record::decode_chunk(gpumon::record::encode_chunk(*chunk, compression));
    auto* back = std::get_if<gpumon::record::ChunkData>(&again);
    if (!back || back->time_ms != chunk->time_ms) std::abort();
  }
  return 0;
}
