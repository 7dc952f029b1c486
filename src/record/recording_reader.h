// SPDX-License-Identifier: MIT
// RecordingReader: opens a recording read-only and gives back its metadata, devices, events,
// processes and sample chunks. Every failure is a message for the user (not a file, not SQLite,
// not a gpumon recording, a newer schema, truncated or corrupt); nothing crashes or throws.
//
// Thread-safety: one thread at a time per reader.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "record/chunk_codec.h"
#include "record/recording_types.h"
#include "record/sqlite_db.h"

namespace gpumon::record {

/// A row of `sample_chunks` without its data.
struct ChunkRef {
  std::int64_t id = 0;
  unsigned gpu = 0;
  std::int64_t first_time_ms = 0;
  std::int64_t last_time_ms = 0;
  std::int64_t ticks = 0;
};

/// How the recording stored metric `id` (its own `metrics` table, so quanta stay right even if
/// the catalog changes).
struct RecordedMetric {
  std::string name;
  std::string unit;
  double quantum = 1;
};

template <typename T>
using ReadResult = std::variant<T, std::string>;  ///< the value, or why it could not be read

class RecordingReader {
 public:
  static std::unique_ptr<RecordingReader> open(const std::string& path, std::string& error);

  const std::string& path() const { return path_; }
  /// Why the recording may hold less than was committed, or empty: a recording that was not
  /// closed (still in WAL mode) whose -wal file is missing or damaged holds what the writer had
  /// checkpointed into the main file, all but its last seconds (docs/recording.md).
  const std::string& warning() const { return warning_; }
  /// Value of a `meta` key ("hostname", "start_time", ...); nullopt when absent.
  std::optional<std::string> meta(const std::string& key) const;
  const std::map<std::string, std::string>& meta_table() const { return meta_; }
  const std::vector<RecordedDevice>& devices() const { return devices_; }
  /// Indexed by metric id; nullopt for ids the recording does not list.
  const std::vector<std::optional<RecordedMetric>>& metrics() const { return metrics_; }

  ReadResult<std::vector<RecordedEvent>> events() const;
  ReadResult<std::vector<RecordedProcess>> processes() const;
  /// Training steps in the order they ended (t_end_s, then arrival); empty for a version-1
  /// recording, which has no steps table.
  ReadResult<std::vector<training::Step>> steps() const;
  /// The same steps one at a time, without holding them all (long runs have millions): `f` is
  /// called for each; returns how many, or why the table could not be read.
  ReadResult<std::size_t> for_each_step(const std::function<void(training::Step&&)>& f) const;
  /// Hello, bye, oom and disconnect events of training processes, in arrival order.
  ReadResult<std::vector<training::RankEvent>> rank_events() const;
  /// The node's samples of the processes' CPU time and memory, in time order; empty before
  /// schema version 3.
  ReadResult<std::vector<training::ProcessSample>> process_samples() const;
  /// The same one at a time; returns how many.
  ReadResult<std::size_t> for_each_process_sample(
      const std::function<void(training::ProcessSample&&)>& f) const;
  /// Chunks of `gpu` (every GPU when nullopt), by GPU then time.
  ReadResult<std::vector<ChunkRef>> chunks(std::optional<unsigned> gpu) const;
  /// The decoded samples of chunk `ref`.
  ReadResult<ChunkData> read_chunk(const ChunkRef& ref) const;

 private:
  RecordingReader() = default;
  std::string load();
  bool has_table(const char* name) const;
  bool has_column(const char* table, const char* column) const;

  std::string path_;
  std::string warning_;
  mutable detail::Db db_;
  std::map<std::string, std::string> meta_;
  std::vector<RecordedDevice> devices_;
  std::vector<std::optional<RecordedMetric>> metrics_;
};

}  // namespace gpumon::record
