// SPDX-License-Identifier: MIT
// SampleStream: a recording's samples back as rows, one per GPU per tick, in time order (GPUs
// in index order within a tick), decoding one chunk per GPU at a time.
// Thread-safety: one thread at a time; the reader must outlive the stream.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpu/metric_catalog.h"
#include "record/recording_reader.h"

namespace gpumon::record {

struct SampleRow {
  unsigned gpu = 0;
  std::int64_t time_ms = 0;  ///< wall time, ms since the Unix epoch
  /// Indexed by MetricId, kMetricCount entries, in the catalog's units; nullopt = missing.
  std::vector<std::optional<double>> values;
};

class SampleStream {
 public:
  /// Every GPU's samples, or only `gpu`'s.
  SampleStream(const RecordingReader& reader, std::optional<unsigned> gpu);

  /// The next row; false at the end or on an error (then error() says what).
  bool next(SampleRow& row);
  const std::string& error() const { return error_; }

 private:
  struct Cursor {
    std::vector<ChunkRef> refs;
    std::size_t next_ref = 0;
    ChunkData chunk;
    std::size_t pos = 0;
  };
  bool fill(Cursor& c);

  const RecordingReader& reader_;
  std::vector<Cursor> cursors_;
  std::string error_;
};

/// Which catalog metrics have at least one value in the samples of `gpu` (every GPU when
/// nullopt); indexed by MetricId. Decodes every chunk once.
ReadResult<std::vector<bool>> metrics_present(const RecordingReader& reader,
                                              std::optional<unsigned> gpu);

}  // namespace gpumon::record
