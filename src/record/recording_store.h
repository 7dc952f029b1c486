// SPDX-License-Identifier: MIT
// RecordingStore: the SQLite side of writing a recording (schema, run metadata, rows). The
// RecordingWriter's thread owns it; nothing here buffers or retries.
// Thread-safety: none; one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "record/recording_types.h"
#include "record/sqlite_db.h"

namespace gpumon::record::detail {

class RecordingStore {
 public:
  /// Creates a new recording at `path` (WAL, synchronous=NORMAL) with its metadata and devices.
  /// An existing file is an error unless `overwrite`. nullptr and `error` set on failure.
  static std::unique_ptr<RecordingStore> create(const std::string& path, bool overwrite,
                                                const RunInfo& run, std::int64_t start_ms,
                                                const std::vector<RecordedDevice>& devices,
                                                std::string& error);

  // Each returns SQLITE_OK or SQLite's error code (then message() says more).
  int begin();
  int commit();
  void rollback();
  /// Inserts a chunk when `row_id` is 0 (and sets it), else replaces row `row_id`.
  int put_chunk(unsigned gpu, std::int64_t& row_id, std::int64_t first_ms, std::int64_t last_ms,
                std::int64_t ticks, std::span<const std::uint8_t> data);
  int put_event(const RecordedEvent& e);
  /// Inserts when `row_id` is 0 (and sets it), else updates the row.
  int put_process(const RecordedProcess& p, std::int64_t& row_id);
  int put_step(const training::Step& s);
  int put_rank_event(const training::RankEvent& e);
  int put_process_sample(const training::ProcessSample& s);
  int set_meta(std::string_view key, std::string_view value);
  /// Copies what the WAL holds into the main file as far as no reader stops it (a PASSIVE
  /// checkpoint), so a copy of the main file alone holds the recording up to now.
  int checkpoint();
  /// The end time, and a switch back to a single-file (rollback journal) database so a finished
  /// recording is one self-contained file.
  int finish(std::int64_t end_ms,
             const std::vector<std::pair<std::string, std::string>>& meta = {});
  std::string message() const { return db_.message(); }
  /// errno of the last failed system call (ENOSPC tells disk full from other I/O errors).
  int system_errno() const { return sqlite3_system_errno(db_.get()); }

 private:
  explicit RecordingStore(Db db);
  Db db_;
  Stmt insert_chunk_;
  Stmt update_chunk_;
  Stmt insert_event_;
  Stmt insert_process_;
  Stmt update_process_;
  Stmt insert_step_;
  Stmt insert_rank_event_;
  Stmt insert_process_sample_;
  Stmt set_meta_;
};

}  // namespace gpumon::record::detail
