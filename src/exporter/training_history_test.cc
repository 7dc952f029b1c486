// SPDX-License-Identifier: MIT
// TrainingHistory: rows by the steps' own end second, an unmeasured wait kept unknown, the
// reduction to two samples a run, the bounds on rows and processes, and reads beside writes.
#include "exporter/training_history.h"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

namespace gpumon::exporter {
namespace {

constexpr double kT0 = 1764446400.0;

training::Step step(std::int64_t pid, double t_end_s, double cpu_s,
                    std::optional<double> wait_s = std::nullopt) {
  training::Step s;
  s.pid = pid;
  s.rank = pid - 100;
  s.t_end_s = t_end_s;
  s.t_start_s = t_end_s - cpu_s;
  s.cpu_step_s = cpu_s;
  s.data_wait_s = wait_s;
  return s;
}

TEST(TrainingHistory, OneRowPerSecondOfTheStepsOwnEndTimes) {
  TrainingHistory h;
  // Handed over in one batch, as clients do: the rows follow the steps' ends, not arrival.
  for (int i = 0; i < 8; ++i) {
    training::Step s = step(100, kT0 + 0.25 * i + 0.1, 0.25, 0.05);
    s.allocated_bytes = 1000 + i;
    h.add(s);
  }
  const TrainingHistoryColumns c = h.columns(3600);
  ASSERT_EQ(c.ranks.size(), 1U);
  EXPECT_EQ(c.metrics, TrainingHistory::metrics());
  EXPECT_EQ(c.stride, 1U);
  const HistoryRankColumns& r = c.ranks[0];
  EXPECT_EQ(r.pid, 100);
  EXPECT_EQ(r.rank, 0);
  ASSERT_EQ(r.time.size(), 2U);  // seconds kT0 and kT0 + 1, 4 steps each
  EXPECT_DOUBLE_EQ(r.time[0], kT0);
  EXPECT_DOUBLE_EQ(r.time[1], kT0 + 1);
  EXPECT_FLOAT_EQ(r.values[0][0], 0.25F);    // mean step time
  EXPECT_FLOAT_EQ(r.values[1][0], 0.2F);     // 0.05 of 0.25 s waiting
  EXPECT_FLOAT_EQ(r.values[2][0], 1003.0F);  // the row's newest allocated bytes
  EXPECT_TRUE(std::isnan(r.values[3][0]));   // reserved: never sent
  EXPECT_FLOAT_EQ(r.values[2][1], 1007.0F);
}

TEST(TrainingHistory, AWaitNotMeasuredIsNullNeverZero) {
  TrainingHistory h;
  h.add(step(100, kT0 + 0.5, 0.1));        // not measured
  h.add(step(100, kT0 + 1.5, 0.1));        // not measured
  h.add(step(100, kT0 + 1.7, 0.1, 0.0));   // measured: no wait
  h.add(step(100, kT0 + 1.9, 0.1, 0.05));  // the share is of the measured steps alone
  const auto c = h.columns(3600);
  ASSERT_EQ(c.ranks.size(), 1U);
  EXPECT_TRUE(std::isnan(c.ranks[0].values[1][0]));
  EXPECT_FLOAT_EQ(c.ranks[0].values[1][1], 0.25F);
  const auto json = nlohmann::json::parse(write_history_json(c));
  EXPECT_TRUE(json["ranks"][0]["values"]["data_wait_share"][0].is_null());
  EXPECT_EQ(json["ranks"][0]["rank"], 0);
  EXPECT_EQ(json["metrics"][1], "data_wait_share");
}

TEST(TrainingHistory, RunsOfRowsKeepTheirPeaksInOrderWithinThePoints) {
  TrainingHistory h;
  for (int i = 0; i < 1000; ++i) h.add(step(100, kT0 + i, i == 517 ? 9.0 : 0.5));
  const auto c = h.columns(3600, 100);
  ASSERT_EQ(c.ranks.size(), 1U);
  EXPECT_EQ(c.stride, 20U);
  const auto& r = c.ranks[0];
  EXPECT_LE(r.time.size(), 100U);
  EXPECT_EQ(r.time.size(), r.values[0].size());
  float peak = 0;
  for (float v : r.values[0]) peak = std::max(peak, v);
  EXPECT_FLOAT_EQ(peak, 9.0F);  // one slow step among 1000 is still drawn
  // The window: the last 100 s before the newest row.
  const auto recent = h.columns(100);
  EXPECT_EQ(recent.ranks[0].time.size(), 100U);
  EXPECT_DOUBLE_EQ(recent.ranks[0].time.front(), kT0 + 900);
  EXPECT_TRUE(h.columns(0).ranks.empty());
}

// Ranks step at their own times and start at their own seconds; reduced, their samples still
// fall on one grid, so the page joins them on at most `points` times.
TEST(TrainingHistory, EveryProcessSamplesOnOneGrid) {
  TrainingHistory h;
  for (int i = 0; i < 3000; ++i) {
    h.add(step(100, kT0 + 0.37 * i, 0.37));
    if (i >= 700) h.add(step(101, kT0 + 0.61 * i + 0.05, 0.61));
  }
  const auto c = h.columns(3600, 200);
  ASSERT_EQ(c.ranks.size(), 2U);
  std::set<double> times;
  for (const auto& r : c.ranks) {
    EXPECT_LE(r.time.size(), 200U);
    times.insert(r.time.begin(), r.time.end());
  }
  EXPECT_LE(times.size(), 200U);  // one grid: rank 101's times are rank 100's, where both ran
  for (double t : times) EXPECT_EQ(std::fmod(t - kT0, 1.0), 0.0) << t;
}

TEST(TrainingHistory, BoundedInRowsAndProcesses) {
  TrainingHistory h;
  for (std::size_t i = 0; i < TrainingHistory::kRows + 50; ++i)
    h.add(step(100, kT0 + static_cast<double>(i), 0.5));
  const auto c = h.columns(1e9);
  EXPECT_EQ(c.ranks[0].time.size(), TrainingHistory::kRows);
  EXPECT_DOUBLE_EQ(c.ranks[0].time.front(), kT0 + 50);  // the oldest went first
  // A newcomer past kMaxRanks replaces the process whose newest step is oldest (pid 100's
  // steps above are newer than every one below).
  for (std::int64_t pid = 1000; pid < 1000 + std::int64_t(TrainingHistory::kMaxRanks); ++pid)
    h.add(step(pid, kT0 + static_cast<double>(pid), 0.5));
  const auto all = h.columns(1e9);
  EXPECT_EQ(all.ranks.size(), TrainingHistory::kMaxRanks);
  bool has_100 = false, has_1000 = false;
  for (const auto& r : all.ranks) has_100 |= r.pid == 100, has_1000 |= r.pid == 1000;
  EXPECT_TRUE(has_100);
  EXPECT_FALSE(has_1000);
  h.forget(100);  // a new process under the pid starts without the old one's rows
  for (const auto& r : h.columns(1e9).ranks) EXPECT_NE(r.pid, 100);
}

TEST(TrainingHistory, AClockSteppedBackFoldsIntoTheNewestRow) {
  TrainingHistory h;
  h.add(step(100, kT0 + 10.5, 0.5));
  h.add(step(100, kT0 + 3.5, 1.5));     // NTP stepped the process's clock back
  h.add(step(100, std::nan(""), 1.5));  // never a row
  const auto c = h.columns(3600);
  ASSERT_EQ(c.ranks[0].time.size(), 1U);
  EXPECT_DOUBLE_EQ(c.ranks[0].time[0], kT0 + 10);
  EXPECT_FLOAT_EQ(c.ranks[0].values[0][0], 1.0F);
}

TEST(TrainingHistory, ReadsWhileStepsArrive) {
  TrainingHistory h;
  std::thread writer([&] {
    for (int i = 0; i < 20000; ++i) h.add(step(100 + i % 8, kT0 + i * 0.01, 0.01, 0.001));
  });
  std::size_t last = 0;
  for (int i = 0; i < 200; ++i) {
    const auto c = h.columns(3600, 50);
    for (const auto& r : c.ranks)
      for (const auto& v : r.values) EXPECT_EQ(v.size(), r.time.size());
    last = c.ranks.size();
  }
  writer.join();
  EXPECT_LE(last, 8U);
  EXPECT_EQ(h.columns(3600).ranks.size(), 8U);
}

}  // namespace
}  // namespace gpumon::exporter
