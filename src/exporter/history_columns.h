// SPDX-License-Identifier: MIT
// The body of /api/v1/history (docs/exporter.md), written once for both of its stores: the
// sampler's ticks (every catalog metric, exact) and ChartHistory (the dashboard's metrics as
// 32-bit floats, one hour at any GPU count). Each fills HistoryColumns; write_history_json turns
// them into the columnar JSON.
//
// Numbers are written in their shortest exact form (a float's shortest form for float
// columns, so 87.3f is "87.3", not 87.30000305175781); NaN and infinities are null, never 0.
// The JSON is written by hand: 64 GPUs x 1 h is millions of values, which a DOM would hold as
// as many nodes.
//
// Thread-safety: pure functions.
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpu/metric_catalog.h"

namespace gpumon::exporter {

/// One GPU's columns: the times of its samples and, per metric, their values (NaN = null).
template <typename T>
struct HistoryGpuColumns {
  unsigned gpu = 0;
  std::vector<double> time;            ///< unix seconds, oldest first
  std::vector<std::vector<T>> values;  ///< one per HistoryColumns::metrics, as long as time
  std::vector<std::int8_t> throttled;  ///< 1, 0, or -1 = null; as long as time when asked for
};

template <typename T>
struct HistoryColumns {
  double interval_s = 0;   ///< the spacing of the samples
  std::size_t stride = 1;  ///< every stride-th sample of the store was kept
  std::vector<MetricId> metrics;
  bool throttled = false;  ///< the kThrottledColumn is one of the columns
  std::vector<HistoryGpuColumns<T>> gpus;
};

/// One training process's columns (TrainingHistory): one value array per
/// TrainingHistoryColumns::metrics, as long as `time`.
struct HistoryRankColumns {
  std::int64_t pid = 0;
  std::optional<std::int64_t> rank;
  std::vector<double> time;  ///< unix seconds (the process's clock), oldest first
  std::vector<std::vector<float>> values;
};

struct TrainingHistoryColumns {
  double interval_s = 0;
  std::size_t stride = 1;
  std::vector<std::string> metrics;
  std::vector<HistoryRankColumns> ranks;
};

std::string write_history_json(const HistoryColumns<double>& columns);
std::string write_history_json(const HistoryColumns<float>& columns);
/// {"interval_s", "stride", "metrics", "ranks": [{"pid", "rank", "time", "values"}]}.
std::string write_history_json(const TrainingHistoryColumns& columns);

/// The two samples a run of `n` rows gives a chart (ChartHistory, TrainingHistory): the lowest
/// and the highest of `value(i)` (NaN: none), in the order they came, so a peak or a dip inside
/// the run is still drawn; NaN twice when the run has none.
template <typename Get>
std::array<float, 2> run_extremes(std::size_t n, Get value) {
  std::size_t lo = 0, hi = 0;
  bool any = false;
  for (std::size_t i = 0; i < n; ++i) {
    const float v = value(i);
    if (std::isnan(v)) continue;
    if (!any || v < value(lo)) lo = i;
    if (!any || v > value(hi)) hi = i;
    any = true;
  }
  if (!any) return {std::nanf(""), std::nanf("")};
  return lo <= hi ? std::array<float, 2>{value(lo), value(hi)}
                  : std::array<float, 2>{value(hi), value(lo)};
}

/// The kThrottledColumn's value of one sample (gpu/throttle.h): 1 throttled, 0 not, -1 unknown
/// (no clock event reasons).
std::int8_t throttled_flag(const std::optional<double>& reasons,
                           const std::optional<double>& sm_clock_mhz,
                           const std::optional<double>& max_sm_clock_mhz);

/// The stride that keeps an answer of `values` values (times included) within `max_values`
/// (0: no bound): every stride-th sample is kept. At least 1. The same rule bounds samples
/// per GPU: history_stride(samples, max_points).
std::size_t history_stride(std::size_t values, std::size_t max_values);

}  // namespace gpumon::exporter
