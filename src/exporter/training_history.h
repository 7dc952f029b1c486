// SPDX-License-Identifier: MIT
// TrainingHistory: the last hour of each training process's steps for the web dashboard's
// training charts (/api/v1/training/history), so that a page opened mid-run draws the run so
// far, as the GPU charts do from ChartHistory.
//
// One row per process and second of the steps' own end times (t_end_s: clients hand steps over
// in batches, so arrival times would pile a second's steps into the next), holding the steps'
// count, their summed CPU step time, their data wait as training::WaitTally counts it (a wait
// not measured stays unknown), and the newest allocated and reserved bytes. Served per row as
// the mean step time, the share of it spent waiting, and the bytes, at the row's second; where
// the window's seconds outnumber the points asked for, each run of `stride` seconds of one grid
// for every process gives two samples (run_extremes) at the run's first and last second. Every
// process's samples so fall on the same times, and the page joins 64 ranks on at most `points`
// times, not 64 x `points`.
//
// Bounds: kRows rows per process (an hour at one step a second or more; a slower run keeps
// more than an hour in them), at most kMaxRanks processes (a newcomer beyond them replaces the
// one whose newest step is oldest). 32 bytes a row: 64 processes x 1 h is 7.4 MB.
//
// Thread-safety: add() and columns() from any thread at once; its own lock, held only while
// copying the asked-for window out (the reduction runs after, so the agent thread's add() waits
// for a copy at most).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "exporter/history_columns.h"
#include "training/training_types.h"

namespace gpumon::exporter {

class TrainingHistory {
 public:
  static constexpr std::size_t kRows = 3600;
  static constexpr std::size_t kMaxRanks = 128;
  /// The served columns, in this order (web/dashboard/dashboard.js's TRAINING_CHARTS read them).
  static const std::vector<std::string>& metrics();

  /// Folds one step into its process's row of the step's end second. A step ending before
  /// the process's newest row (a clock stepped back) folds into that row.
  void add(const training::Step& step);
  /// A process starting afresh under a pid seen before (its hello): its rows are dropped.
  void forget(std::int64_t pid);

  /// The rows of the last `seconds` (whole seconds, at least 1) up to the newest row of any
  /// process (nothing for <= 0), processes in (rank, pid) order, with at most `max_points` (0:
  /// no bound; else at least 2) samples per process. Where the seconds from the oldest row in
  /// the window to the newest are more, runs of `stride` seconds (one grid from that oldest
  /// second) give two samples each, at the run's first and last second, each column's lowest
  /// and highest in the order they came.
  TrainingHistoryColumns columns(double seconds, std::size_t max_points = 0) const;

 private:
  struct Row {
    double t_end_s = 0;  // the newest step's end
    float step_s = 0;    // summed
    float wait_s = 0, waited_step_s = 0;
    float allocated = 0, reserved = 0;  // NaN: no step of the row carried them
    std::uint32_t steps = 0;
  };
  struct Series {
    std::optional<std::int64_t> rank;
    std::vector<Row> rows;  // a ring of up to kRows, oldest at `next` once full
    std::size_t next = 0;
    std::size_t count() const { return rows.size(); }
    const Row& newest() const { return rows[(next + rows.size() - 1) % rows.size()]; }
    Row& newest() { return rows[(next + rows.size() - 1) % rows.size()]; }
    const Row& at(std::size_t i) const { return rows[(next + i) % rows.size()]; }  // 0: oldest
  };

  mutable std::mutex mutex_;               // guards what follows
  std::map<std::int64_t, Series> series_;  // by pid
};

}  // namespace gpumon::exporter
