// SPDX-License-Identifier: MIT
// RecordingBatcher: turns queued ticks, events and process lists into one SQLite transaction.
// It keeps each GPU's open chunk (rewritten at every flush until it is full) and the processes
// currently seen (one row per stretch of presence, updated in place).
// Thread-safety: none; the RecordingWriter's thread owns it.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "record/chunk_builder.h"
#include "record/recording_store.h"
#include "sampler/sample_sink.h"

namespace gpumon::record::detail {

class RecordingBatcher {
 public:
  RecordingBatcher(std::unique_ptr<RecordingStore> store, std::size_t chunk_max_ticks,
                   std::chrono::milliseconds chunk_max_span, std::string path);

  /// Writes every item in one transaction. Empty on success, else why the recording stopped
  /// (the transaction is rolled back; earlier ones stay).
  std::string write(const std::vector<TickSample>& ticks, const std::vector<GpuEvent>& events,
                    const std::vector<ProcessSnapshot>& snapshots,
                    const std::vector<training::Step>& steps = {},
                    const std::vector<training::RankEvent>& rank_events = {},
                    const std::vector<training::ProcessSample>& process_samples = {});
  /// The end time (now), `meta` (the run's end: RecordingWriter::set_end_meta) and the switch to
  /// a single-file database.
  std::string finish(const std::vector<std::pair<std::string, std::string>>& meta = {});
  /// Moves what is committed from the WAL into the main file (RecordingStore::checkpoint()).
  /// A failure loses nothing (the WAL keeps it) and is left to the next commit to report.
  void checkpoint() { (void)store_->checkpoint(); }
  std::uint64_t ticks_committed() const { return ticks_committed_; }
  std::uint64_t steps_committed() const { return steps_committed_; }

 private:
  struct OpenChunk {
    ChunkBuilder builder;
    std::int64_t row_id = 0;
    bool dirty = false;
  };
  struct SeenProcess {
    RecordedProcess row;
    std::int64_t row_id = 0;
  };

  int add_tick(const TickSample& tick);
  int flush_chunk(unsigned gpu, OpenChunk& c, bool final);
  int add_processes(const ProcessSnapshot& snapshot);
  std::string failure(int rc, std::string_view what);

  std::unique_ptr<RecordingStore> store_;
  std::size_t chunk_max_ticks_;
  std::int64_t chunk_max_span_ms_;
  std::string path_;
  std::map<unsigned, OpenChunk> chunks_;
  std::map<std::pair<unsigned, unsigned>, SeenProcess> processes_;  // (gpu, pid)
  std::int64_t last_committed_ms_ = 0;
  std::int64_t last_tick_ms_ = 0;
  std::uint64_t ticks_committed_ = 0;
  std::uint64_t steps_committed_ = 0;
};

}  // namespace gpumon::record::detail
