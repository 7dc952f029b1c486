// SPDX-License-Identifier: MIT
#include "exporter/chart_history.h"

#include <gtest/gtest.h>

#include <cmath>

namespace gpumon::exporter {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr std::size_t kNoCap = std::size_t{1} << 40;

struct Ticks {
  MonoClock::time_point mono{seconds(1000)};
  WallClock::time_point wall{seconds(1764450000)};
  ChartHistory history;
  explicit Ticks(MonoClock::duration interval, MonoClock::duration span = seconds(3600))
      : history(interval, span) {}
  /// A tick `after` the previous one with `samples`.
  void add(MonoClock::duration after, std::vector<DeviceSample> samples) {
    mono += after;
    wall += std::chrono::duration_cast<WallClock::duration>(after);
    TickSample t;
    t.mono_time = mono;
    t.wall_time = wall;
    t.gpus = std::move(samples);
    history.add(t);
  }
};

DeviceSample sample(unsigned gpu, unsigned util) {
  DeviceSample s;
  s.index = gpu;
  s.utilization_gpu_pct = util;
  s.power_draw_w = 100.0 + util;
  s.sm_clock_mhz = 1980U;
  return s;
}

const std::vector<MetricId> kUtil = {MetricId::kUtilizationGpuPct};

TEST(ChartHistory, HoldsAnHourOfSixtyFourGpusAndDropsTheOldest) {
  Ticks t(seconds(1));
  for (unsigned i = 0; i < 3700; ++i) {
    std::vector<DeviceSample> gpus;
    for (unsigned g = 0; g < 64; ++g) gpus.push_back(sample(g, i % 100));
    t.add(seconds(1), std::move(gpus));
  }
  EXPECT_EQ(t.history.capacity(), 3600U);
  const auto c = t.history.columns(1e9, kUtil, false, {}, kNoCap);
  ASSERT_EQ(c.gpus.size(), 64U);
  EXPECT_EQ(c.interval_s, 1.0);
  ASSERT_EQ(c.gpus[63].time.size(), 3600U);
  EXPECT_EQ(c.gpus[63].values[0].front(), 100 % 100);  // tick 100 is the oldest kept
  EXPECT_EQ(c.gpus[63].values[0].back(), 3699 % 100);
  EXPECT_DOUBLE_EQ(c.gpus[63].time.back() - c.gpus[63].time.front(), 3599.0);
  // Within the API's bound: every other row.
  const auto bounded = t.history.columns(3600, kUtil, true, {}, 2'000'000);
  EXPECT_EQ(bounded.stride, 1U) << "64 x 3600 x 3 values fit";
  const auto tight = t.history.columns(3600, kUtil, false, {}, 64 * 3600);
  EXPECT_EQ(tight.stride, 4U) << "room for 1800 samples: 900 runs of 4 rows, two samples each";
  EXPECT_EQ(tight.gpus[0].time.size(), 1800U);
  // At most 1000 samples per GPU: 450 runs of 8 rows, each its lowest and highest.
  const auto points = t.history.columns(3600, kUtil, false, {}, kNoCap, 1000);
  EXPECT_EQ(points.stride, 8U);
  ASSERT_EQ(points.gpus[0].time.size(), 900U);
  EXPECT_EQ(points.gpus[0].values[0][0], 0);  // rows 100..107 read 0..7
  EXPECT_EQ(points.gpus[0].values[0][1], 7);
  EXPECT_DOUBLE_EQ(points.gpus[0].time[1] - points.gpus[0].time[0], 7.0);
}

TEST(ChartHistory, TheBoundOnValuesHoldsWhenGpusComeAndGo) {
  // GPU 0 in every row, GPU 1 in every other: each may fill the samples a GPU is allowed.
  Ticks t(seconds(1));
  for (unsigned i = 0; i < 1000; ++i) {
    std::vector<DeviceSample> gpus = {sample(0, i % 100)};
    if (i % 2 == 0) gpus.push_back(sample(1, i % 100));
    t.add(seconds(1), std::move(gpus));
  }
  const std::size_t bound = 750 * 2;  // columns: util and time
  const auto c = t.history.columns(1e9, kUtil, false, {}, bound);
  std::size_t values = 0;
  for (const auto& g : c.gpus) values += g.time.size() * 2;
  EXPECT_LE(values, bound);
  EXPECT_GE(values, bound * 8 / 10) << "and close to it";
}

TEST(ChartHistory, RunsOfRowsKeepTheirPeakAndDipInTheOrderTheyCame) {
  Ticks t(seconds(1));
  // 12 rows into 2 samples a run of 6 (points=4): a peak then a dip, a dip then a peak.
  const std::vector<std::optional<unsigned>> util = {50, 99, 50, 50,           3,  50,  //
                                                     50, 2,  50, std::nullopt, 97, 50};
  for (const auto& u : util) {
    DeviceSample s = sample(0, u.value_or(0));
    if (!u) s.utilization_gpu_pct = {};
    s.clock_event_reasons = u == 3U ? kClockEventSwThermalSlowdown : 0;
    s.sm_clock_mhz = u == 3U ? 1500U : 1980U;
    DeviceSample lost;
    lost.index = 1;
    lost.lost = true;
    t.add(seconds(1), {s, lost});
  }
  std::vector<DeviceStatic> devices(1);
  devices[0].max_sm_clock_mhz = 1980U;
  const auto c = t.history.columns(1e9, kUtil, true, devices, kNoCap, 4);
  EXPECT_EQ(c.stride, 6U);
  ASSERT_EQ(c.gpus.size(), 2U);
  EXPECT_EQ(c.gpus[0].values[0], std::vector<float>({99, 3, 2, 97}));
  EXPECT_EQ(c.gpus[0].throttled, std::vector<std::int8_t>({1, 1, 0, 0}));
  EXPECT_DOUBLE_EQ(c.gpus[0].time[1] - c.gpus[0].time[0], 5.0);
  ASSERT_EQ(c.gpus[1].values[0].size(), 4U);
  EXPECT_TRUE(std::isnan(c.gpus[1].values[0][0])) << "a run of no readings stays a gap";
}

TEST(ChartHistory, AWindowIsTheRowsNewerThanItsStart) {
  Ticks t(seconds(1));
  for (unsigned i = 0; i < 10; ++i) t.add(seconds(1), {sample(0, i)});
  const auto c = t.history.columns(2.5, kUtil, false, {}, kNoCap);
  ASSERT_EQ(c.gpus.size(), 1U);
  EXPECT_EQ(c.gpus[0].values[0], std::vector<float>({7, 8, 9}));
  EXPECT_TRUE(t.history.columns(0, kUtil, false, {}, kNoCap).gpus.empty());
  EXPECT_TRUE(t.history.columns(-1, kUtil, false, {}, kNoCap).gpus.empty());
  EXPECT_TRUE(t.history.columns(std::nan(""), kUtil, false, {}, kNoCap).gpus.empty());
  EXPECT_TRUE(
      ChartHistory(seconds(1), seconds(3600)).columns(10, kUtil, false, {}, kNoCap).gpus.empty());
}

TEST(ChartHistory, FastTicksFoldIntoRowsThatKeepTheSlowReadings) {
  // 0.1 s ticks; the temperature (a slow group) only in every tenth, at a varying phase.
  Ticks t(milliseconds(100));
  EXPECT_EQ(t.history.row_period_s(), 1.0);
  for (unsigned i = 0; i < 100; ++i) {
    DeviceSample s = sample(0, i);
    if (i % 10 == 3) s.temperature_gpu_c = 40U + i / 10;
    t.add(milliseconds(100), {s});
  }
  const auto c = t.history.columns(1e9, {MetricId::kUtilizationGpuPct, MetricId::kTemperatureGpuC},
                                   false, {}, kNoCap);
  ASSERT_EQ(c.gpus.size(), 1U);
  ASSERT_EQ(c.gpus[0].time.size(), 10U);
  for (unsigned r = 0; r < 10; ++r) {
    EXPECT_EQ(c.gpus[0].values[0][r], 10 * r + 9) << "the newest reading of the row";
    EXPECT_EQ(c.gpus[0].values[1][r], 40 + r) << "a reading in one tick of ten is kept";
  }
}

TEST(ChartHistory, ALateTickStartsItsOwnRow) {
  Ticks t(seconds(1));
  t.add(seconds(1), {sample(0, 1)});
  t.add(milliseconds(600), {sample(0, 2)});  // 0.4 s early: still a row of its own
  t.add(milliseconds(1400), {sample(0, 3)});
  t.add(milliseconds(300), {sample(0, 4)});  // a second tick within the row: folded
  const auto c = t.history.columns(1e9, kUtil, false, {}, kNoCap);
  EXPECT_EQ(c.gpus[0].values[0], std::vector<float>({1, 2, 4}));
}

TEST(ChartHistory, AGpuMissingFromRowsHasNoEntryForThemAndLostIsNull) {
  Ticks t(seconds(1));
  t.add(seconds(1), {sample(0, 1), sample(1, 1)});
  t.add(seconds(1), {sample(0, 2)});
  DeviceSample lost;
  lost.index = 1;
  lost.lost = true;
  t.add(seconds(1), {sample(0, 3), lost});
  const auto c = t.history.columns(1e9, kUtil, false, {}, kNoCap);
  ASSERT_EQ(c.gpus.size(), 2U);
  EXPECT_EQ(c.gpus[1].gpu, 1U);
  ASSERT_EQ(c.gpus[1].time.size(), 2U);
  EXPECT_EQ(c.gpus[1].values[0][0], 1);
  EXPECT_TRUE(std::isnan(c.gpus[1].values[0][1]));
  EXPECT_EQ(c.gpus[0].time.size(), 3U);
}

TEST(ChartHistory, ThrottledIsTheOneRuleOverTheRow) {
  Ticks t(seconds(1));
  const std::vector<std::pair<std::optional<std::uint64_t>, unsigned>> rows = {
      {kClockEventSwThermalSlowdown | kClockEventGpuIdle, 1500},
      {kClockEventSwPowerCap, 1900},
      {std::nullopt, 1980},
      {std::uint64_t{1} << 40 | kClockEventHwSlowdown, 900}};  // an unknown high bit too
  for (const auto& [reasons, clock] : rows) {
    DeviceSample s = sample(0, 90);
    if (reasons) s.clock_event_reasons = *reasons;
    s.sm_clock_mhz = clock;
    t.add(seconds(1), {s});
  }
  std::vector<DeviceStatic> devices(1);
  devices[0].max_sm_clock_mhz = 1980U;
  const auto c = t.history.columns(1e9, {}, true, devices, kNoCap);
  EXPECT_EQ(c.gpus[0].throttled, std::vector<std::int8_t>({1, 0, -1, 1}));
  EXPECT_TRUE(c.gpus[0].values.empty());
}

TEST(ChartHistory, HoldsTheChartMetricsOnly) {
  EXPECT_TRUE(ChartHistory::holds(MetricId::kPowerDrawW));
  EXPECT_TRUE(ChartHistory::holds(MetricId::kSmActiveRatio));
  EXPECT_FALSE(ChartHistory::holds(MetricId::kEnergyJ));
  EXPECT_EQ(ChartHistory::metrics().size(), 11U);
}

TEST(ChartHistory, SubSecondIntervalsMakeRowsOfWholeIntervalsThatSpanTheHour) {
  // 0.7 s: two ticks a row (1.4 s); 0.4 s: three (1.2 s). Capacity covers the whole span.
  for (const auto& [interval, ticks_per_row] : std::vector<std::pair<milliseconds, unsigned>>{
           {milliseconds(700), 2U}, {milliseconds(400), 3U}}) {
    Ticks t(interval);
    const double period = std::chrono::duration<double>(interval).count() * ticks_per_row;
    EXPECT_DOUBLE_EQ(t.history.row_period_s(), period);
    EXPECT_EQ(t.history.capacity(), static_cast<std::size_t>(std::ceil(3600 / period)));
    const std::size_t ticks = (t.history.capacity() + 5) * ticks_per_row;
    for (std::size_t i = 0; i < ticks; ++i) t.add(interval, {sample(0, i % 100)});
    const auto c = t.history.columns(1e9, kUtil, false, {}, kNoCap);
    EXPECT_DOUBLE_EQ(c.interval_s, period);
    ASSERT_EQ(c.gpus.size(), 1U);
    EXPECT_EQ(c.gpus[0].time.size(), t.history.capacity());
    EXPECT_GE(c.gpus[0].time.back() - c.gpus[0].time.front(), 3600 - 2 * period)
        << "the rows span the hour";
  }
}

TEST(ChartHistory, AClockThatWentBackStartsAfresh) {
  Ticks t(seconds(1));
  for (unsigned i = 0; i < 5; ++i) t.add(seconds(1), {sample(0, i)});
  t.add(-seconds(100), {sample(0, 50)});
  t.add(seconds(1), {sample(0, 51)});
  const auto c = t.history.columns(1e9, kUtil, false, {}, kNoCap);
  EXPECT_EQ(c.gpus[0].values[0], std::vector<float>({50, 51}))
      << "rows from before the step would widen the window";
}

TEST(ChartHistory, ASlowIntervalKeepsEveryTickForTheSpan) {
  Ticks t(seconds(60));
  EXPECT_EQ(t.history.capacity(), 60U);
  EXPECT_EQ(t.history.row_period_s(), 60.0);
}

}  // namespace
}  // namespace gpumon::exporter
