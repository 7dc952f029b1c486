// SPDX-License-Identifier: MIT
// ChunkBuilder: collects one GPU's samples, tick by tick, into the columns of a ChunkData.
// Thread-safety: none (the recording's writer thread owns each builder).
#pragma once

#include <cstdint>
#include <vector>

#include "gpu/gpu_types.h"
#include "record/chunk_codec.h"

namespace gpumon::record {

class ChunkBuilder {
 public:
  ChunkBuilder();

  /// Adds `s` at `time_ms` (wall time, ms since the epoch): every catalog metric, quantised;
  /// missing, NaN and infinite values become absent.
  void append(std::int64_t time_ms, const DeviceSample& s);
  std::size_t ticks() const { return data_.time_ms.size(); }
  bool empty() const { return data_.time_ms.empty(); }
  std::int64_t first_time_ms() const { return data_.time_ms.front(); }
  std::int64_t last_time_ms() const { return data_.time_ms.back(); }
  /// `final`: the chunk is full and written for the last time (stronger compression).
  std::vector<std::uint8_t> encode(bool final) const {
    return encode_chunk(data_, ChunkCompression::kZstd, final ? kZstdLevelFinal : kZstdLevelOpen);
  }
  void clear();

 private:
  ChunkData data_;
};

}  // namespace gpumon::record
