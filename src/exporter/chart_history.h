// SPDX-License-Identifier: MIT
// ChartHistory: the last hour of the metrics the web dashboard charts, for any number of GPUs,
// in about 47 bytes per GPU per second (64 GPUs: 11 MB). The sampler's own history keeps whole
// ticks (about 1 KB per GPU each), so under its memory cap it holds 16 minutes of 64 GPUs; the
// dashboard's 1 h window reads this one instead (ExporterState::history_json).
//
// One row per row period, the fewest whole intervals that last at least 1 s (1 s at 0.1 s,
// 1.4 s at 0.7 s, the interval itself from 1 s up): the dashboard polls at most once a second,
// and 3600 points already exceed a chart's pixels. A row holds each metric's newest reading
// among the ticks it covers (so a metric read once a second is kept at a 0.1 s interval; a GPU
// lost in a row's later tick keeps the row's earlier readings), the clock event reasons that
// can mean throttling (the newest too: they are judged with the SM clock of the same tick), and
// which GPUs were in it. Values are 32-bit floats (7 significant digits: a byte count to about
// 8 KiB of 80 GB).
//
// Thread-safety: add() from the sampler thread and columns() from any thread, at once; its own
// lock, held while copying out the asked-for window (milliseconds for 64 GPUs x 1 h).
#pragma once

#include <cstdint>
#include <mutex>
#include <span>
#include <vector>

#include "exporter/history_columns.h"
#include "gpu/gpu_types.h"
#include "sampler/clock.h"
#include "sampler/sample_sink.h"

namespace gpumon::exporter {

class ChartHistory {
 public:
  /// The metrics kept: those of the dashboard's charts (web/dashboard/dashboard.js; a test in
  /// web/ holds the two lists equal).
  static std::span<const MetricId> metrics();
  static bool holds(MetricId id);

  /// `span` of rows for a sampler ticking every `interval`.
  ChartHistory(MonoClock::duration interval, MonoClock::duration span);

  /// Folds one tick in: into the open row, or into a new row once the open one has lasted a
  /// row period (less half an interval, so a late tick does not merge two).
  void add(const TickSample& tick);

  /// The rows of the last `seconds` (nothing for <= 0) of `ids` (each one that holds() is
  /// true for), with the kThrottledColumn when `throttled` (the max SM clocks from `devices`),
  /// GPUs in index order, with at most `max_values` values and at most `max_points` (0: no
  /// bound; else at least 2) samples per GPU. Where the rows are more, each run of `stride` rows
  /// gives two samples, at its first and last time: each metric's lowest and highest reading
  /// in the order they came (NaN only when the run has none), and throttled when any row was.
  /// A peak or a dip stays visible at any stride; a gap shorter than a run does not.
  HistoryColumns<float> columns(double seconds, const std::vector<MetricId>& ids, bool throttled,
                                const std::vector<DeviceStatic>& devices, std::size_t max_values,
                                std::size_t max_points = 0) const;

  double row_period_s() const;
  std::size_t capacity() const { return capacity_; }

 private:
  struct Gpu {
    unsigned index = 0;
    std::vector<float> values;          // metric-major: values[m * capacity_ + row], NaN = none
    std::vector<std::uint8_t> reasons;  // the throttle-reason bits; kNoReasons = not read
    std::vector<std::uint8_t> present;  // 1 when a tick of the row had this GPU
  };
  static constexpr std::uint8_t kNoReasons = 0xff;

  Gpu& gpu_locked(unsigned index);
  void clear_row_locked(Gpu& g, std::size_t row);

  const MonoClock::duration row_period_;
  const MonoClock::duration new_row_after_;
  const std::size_t capacity_;

  mutable std::mutex mutex_;                 // guards what follows
  std::vector<double> time_;                 // unix seconds of each row's newest tick
  std::vector<MonoClock::time_point> mono_;  // and its monotonic time
  std::size_t newest_ = 0;                   // the open row's slot
  std::size_t count_ = 0;                    // rows held, the open one included
  MonoClock::time_point open_since_{};
  std::vector<Gpu> gpus_;  // in index order
};

}  // namespace gpumon::exporter
