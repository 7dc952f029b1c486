// SPDX-License-Identifier: MIT
#include "exporter/chart_history.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <limits>

#include "exporter/exporter_view.h"
#include "exporter/renderers.h"
#include "gpu/throttle.h"  // kThrottleReasonMask

namespace gpumon::exporter {
namespace {

constexpr std::array kMetrics = {
    MetricId::kUtilizationGpuPct, MetricId::kSmActiveRatio,   MetricId::kMemoryUsedBytes,
    MetricId::kMemoryTotalBytes,  MetricId::kPowerDrawW,      MetricId::kPowerLimitW,
    MetricId::kPowerMaxW,         MetricId::kTemperatureGpuC, MetricId::kTemperatureMemoryC,
    MetricId::kSmClockMhz,        MetricId::kMemClockMhz,
};
constexpr std::size_t kMetricCount = kMetrics.size();

// The reason bits fit a byte, and no set of them is all ones (the "not read" mark).
static_assert((kThrottleReasonMask & ~std::uint64_t{0xfe}) == 0);

constexpr float kNone = std::numeric_limits<float>::quiet_NaN();

std::size_t slot_of(MetricId id) {
  return static_cast<std::size_t>(std::find(kMetrics.begin(), kMetrics.end(), id) -
                                  kMetrics.begin());
}

}  // namespace

std::span<const MetricId> ChartHistory::metrics() {
  return kMetrics;
}

bool ChartHistory::holds(MetricId id) {
  return slot_of(id) < kMetricCount;
}

namespace {

// A whole number of intervals of at least a second: rows of equal length, each of the same
// count of ticks, so that `capacity` rows span the whole `span` at any interval.
MonoClock::duration row_period_for(MonoClock::duration interval) {
  const MonoClock::duration second = std::chrono::seconds(1);
  if (interval <= MonoClock::duration::zero()) return second;
  return interval * ((second + interval - MonoClock::duration(1)) / interval);
}

}  // namespace

ChartHistory::ChartHistory(MonoClock::duration interval, MonoClock::duration span)
    : row_period_(row_period_for(interval)),
      new_row_after_(row_period_ - std::min(interval, row_period_) / 2),
      capacity_(static_cast<std::size_t>(std::max<MonoClock::rep>(
          1, (span + row_period_ - MonoClock::duration(1)) / row_period_))),
      time_(capacity_),
      mono_(capacity_) {}

double ChartHistory::row_period_s() const {
  return std::chrono::duration<double>(row_period_).count();
}

ChartHistory::Gpu& ChartHistory::gpu_locked(unsigned index) {
  auto it = std::lower_bound(gpus_.begin(), gpus_.end(), index,
                             [](const Gpu& g, unsigned i) { return g.index < i; });
  if (it != gpus_.end() && it->index == index) return *it;
  Gpu g;
  g.index = index;
  g.values.assign(kMetricCount * capacity_, kNone);
  g.reasons.assign(capacity_, kNoReasons);
  g.present.assign(capacity_, 0);
  return *gpus_.insert(it, std::move(g));
}

void ChartHistory::clear_row_locked(Gpu& g, std::size_t row) {
  for (std::size_t m = 0; m < kMetricCount; ++m) g.values[m * capacity_ + row] = kNone;
  g.reasons[row] = kNoReasons;
  g.present[row] = 0;
}

void ChartHistory::add(const TickSample& tick) {
  std::lock_guard lock(mutex_);
  if (tick.mono_time < open_since_) count_ = 0;  // a clock that went back: the rows are void
  if (count_ == 0 || tick.mono_time - open_since_ >= new_row_after_) {
    if (count_ > 0) newest_ = (newest_ + 1) % capacity_;
    count_ = std::min(count_ + 1, capacity_);
    open_since_ = tick.mono_time;
    for (Gpu& g : gpus_) clear_row_locked(g, newest_);
  }
  const std::size_t row = newest_;
  time_[row] = unix_seconds(tick.wall_time);
  mono_[row] = tick.mono_time;
  for (const DeviceSample& s : tick.gpus) {
    if (s.index >= kMaxGpuIndex) continue;
    Gpu& g = gpu_locked(s.index);
    g.present[row] = 1;
    for (std::size_t m = 0; m < kMetricCount; ++m) {
      if (const auto v = metric_value(s, kMetrics[m]))
        g.values[m * capacity_ + row] = static_cast<float>(*v);
    }
    if (const auto r = metric_value(s, MetricId::kClockEventReasons))
      g.reasons[row] =
          static_cast<std::uint8_t>(static_cast<std::uint64_t>(*r) & kThrottleReasonMask);
  }
}

HistoryColumns<float> ChartHistory::columns(double seconds, const std::vector<MetricId>& ids,
                                            bool throttled,
                                            const std::vector<DeviceStatic>& devices,
                                            std::size_t max_values, std::size_t max_points) const {
  HistoryColumns<float> out;
  out.interval_s = row_period_s();
  out.metrics = ids;
  out.throttled = throttled;
  std::vector<std::size_t> slots;
  for (MetricId id : ids) slots.push_back(slot_of(id));  // callers ask only for held ones
  std::lock_guard lock(mutex_);
  if (!(seconds > 0) || count_ == 0) return out;
  // The window's rows, oldest first: those newer than the newest row less `seconds`.
  const double capped = std::min(seconds, 1e9);
  const MonoClock::time_point from =
      mono_[newest_] -
      std::chrono::duration_cast<MonoClock::duration>(std::chrono::duration<double>(capped));
  std::size_t rows = 0;
  while (rows < count_ && mono_[(newest_ + capacity_ - rows) % capacity_] > from) ++rows;
  // The samples per GPU the bounds allow, for the GPUs in the window, each of which may fill
  // them all; when fewer than the rows, runs of rows that give two samples each (so at least
  // two: the bounds are expected to leave room for that).
  std::size_t gpus_in_window = 0;
  for (const Gpu& g : gpus_) {
    bool in = false;
    for (std::size_t i = 0; i < rows && !in; ++i)
      in = g.present[(newest_ + capacity_ - i) % capacity_];
    gpus_in_window += in ? 1 : 0;
  }
  const std::size_t columns_per_row = ids.size() + 1 + (throttled ? 1 : 0);
  std::size_t samples = rows;
  if (max_values > 0 && gpus_in_window > 0)
    samples = std::min(samples, max_values / (gpus_in_window * columns_per_row));
  if (max_points > 0) samples = std::min(samples, max_points);
  const std::size_t pairs = std::max<std::size_t>(1, samples / 2);
  out.stride = samples >= rows ? 1 : (rows + pairs - 1) / pairs;
  const std::size_t oldest = (newest_ + capacity_ - rows + 1) % capacity_;
  for (const Gpu& g : gpus_) {
    HistoryGpuColumns<float> c;
    c.gpu = g.index;
    c.values.resize(ids.size());
    std::optional<double> max_clock;
    for (const DeviceStatic& d : devices)
      if (d.index == g.index && d.max_sm_clock_mhz) max_clock = *d.max_sm_clock_mhz;
    const float* sm_clock = &g.values[slot_of(MetricId::kSmClockMhz) * capacity_];
    const auto throttled_at = [&](std::size_t row) {
      const std::uint8_t r = g.reasons[row];
      return throttled_flag(
          r == kNoReasons ? std::nullopt : std::optional<double>(r),
          std::isnan(sm_clock[row]) ? std::nullopt : std::optional<double>(sm_clock[row]),
          max_clock);
    };
    std::vector<std::size_t> present;  // the rows of one bucket that have this GPU
    for (std::size_t first = 0; first < rows; first += out.stride) {
      present.clear();
      for (std::size_t i = first; i < std::min(rows, first + out.stride); ++i)
        if (const std::size_t row = (oldest + i) % capacity_; g.present[row])
          present.push_back(row);
      if (present.empty()) continue;
      if (present.size() == 1) {
        const std::size_t row = present.front();
        c.time.push_back(time_[row]);
        for (std::size_t m = 0; m < slots.size(); ++m)
          c.values[m].push_back(g.values[slots[m] * capacity_ + row]);
        if (throttled) c.throttled.push_back(throttled_at(row));
        continue;
      }
      // Two samples at the bucket's first and last time: each metric's lowest and highest
      // reading in the order they came, so a peak or a dip inside it is still drawn.
      c.time.push_back(time_[present.front()]);
      c.time.push_back(time_[present.back()]);
      for (std::size_t m = 0; m < slots.size(); ++m) {
        const float* v = &g.values[slots[m] * capacity_];
        const auto two = run_extremes(present.size(), [&](std::size_t i) { return v[present[i]]; });
        c.values[m].insert(c.values[m].end(), two.begin(), two.end());
      }
      if (throttled) {
        std::int8_t flag = -1;  // 1 when any row was throttled, else 0 when any was judged
        for (std::size_t row : present) flag = std::max(flag, throttled_at(row));
        c.throttled.insert(c.throttled.end(), 2, flag);
      }
    }
    if (!c.time.empty()) out.gpus.push_back(std::move(c));
  }
  return out;
}

}  // namespace gpumon::exporter
