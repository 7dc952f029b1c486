// SPDX-License-Identifier: MIT
// The ring buffer gets exhaustive tests: dynolog's has a sign slip in its iterator, and a
// sparkline that shows samples in the wrong order looks plausible.
#include "cli/history.h"

#include <gtest/gtest.h>

#include "cli/test_snapshots.h"

namespace gpumon::cli {
namespace {

std::vector<std::optional<double>> seq(std::initializer_list<double> v) {
  return {v.begin(), v.end()};
}

TEST(History, StartsEmpty) {
  const History h(3);
  EXPECT_EQ(h.size(), 0U);
  EXPECT_EQ(h.capacity(), 3U);
  EXPECT_TRUE(h.values().empty());
  EXPECT_FALSE(h.at(0).has_value());
}

TEST(History, EveryFillLevelAndWrapPositionKeepsOrder) {
  // For every capacity up to 6 and up to three full wraps, the kept samples are exactly the
  // newest min(n, capacity) pushed, oldest first.
  for (std::size_t capacity = 1; capacity <= 6; ++capacity) {
    History h(capacity);
    for (int pushed = 1; pushed <= static_cast<int>(capacity) * 3 + 1; ++pushed) {
      h.push(pushed);
      const std::size_t kept = std::min<std::size_t>(static_cast<std::size_t>(pushed), capacity);
      ASSERT_EQ(h.size(), kept);
      for (std::size_t i = 0; i < kept; ++i) {
        const double expected = pushed - static_cast<double>(kept) + 1 + static_cast<double>(i);
        ASSERT_EQ(h.at(i), expected) << "capacity " << capacity << " pushed " << pushed;
      }
      ASSERT_FALSE(h.at(kept).has_value());
    }
  }
}

TEST(History, KeepsGaps) {
  History h(4);
  h.push(1);
  h.push(std::nullopt);
  h.push(3);
  const auto v = h.values();
  ASSERT_EQ(v.size(), 3U);
  EXPECT_EQ(v[0], 1.0);
  EXPECT_FALSE(v[1].has_value());
  EXPECT_EQ(v[2], 3.0);
}

TEST(History, ZeroCapacityMeansOne) {
  History h(0);
  h.push(1);
  h.push(2);
  EXPECT_EQ(h.values(), seq({2}));
}

TEST(Sparkline, ScalesToEightLevelsNewestLast) {
  History h(10);
  for (double v : {0.0, 100.0 / 7, 200.0 / 7, 300.0 / 7, 400.0 / 7, 500.0 / 7, 600.0 / 7, 100.0}) {
    h.push(v);
  }
  EXPECT_EQ(sparkline(h, 8, 100, true),
            "\xE2\x96\x81\xE2\x96\x82\xE2\x96\x83\xE2\x96\x84\xE2\x96\x85\xE2\x96\x86\xE2\x96\x87"
            "\xE2\x96\x88");
  EXPECT_EQ(sparkline(h, 8, 100, false), "_.:-=+*#");
}

TEST(Sparkline, PadsLeftShowsNewestAndGaps) {
  History h(60);
  h.push(100);
  h.push(std::nullopt);
  h.push(0);
  EXPECT_EQ(sparkline(h, 5, 100, false), "  # _");
  EXPECT_EQ(sparkline(h, 2, 100, false), " _");  // only the newest two
  EXPECT_EQ(sparkline(h, 0, 100, false), "");
}

TEST(Sparkline, ClampsOutOfRangeValues) {
  History h(3);
  h.push(250);
  h.push(-5);
  EXPECT_EQ(sparkline(h, 2, 100, false), "#_");
  EXPECT_EQ(sparkline(h, 2, 0, false), "__");  // no scale: lowest level, not a crash
}

TEST(GpuHistories, RecordsUtilizationAndMemoryPerGpu) {
  Snapshot snap = testing::empty_snapshot();
  snap.gpus.push_back(testing::healthy_gpu(0));
  snap.gpus.push_back(testing::gpu_with_missing_fields(1));
  GpuHistories hist(60);
  hist.record(snap);
  hist.record(snap);
  EXPECT_EQ(hist.utilization(0).values(), seq({98, 98}));
  EXPECT_EQ(hist.memory(0).values(), seq({50, 50}));
  ASSERT_EQ(hist.utilization(1).size(), 2U);
  EXPECT_FALSE(hist.utilization(1).at(0).has_value());  // missing stays a gap
  EXPECT_FALSE(hist.memory(1).at(1).has_value());
  EXPECT_EQ(hist.utilization(7).size(), 0U);  // never seen
}

}  // namespace
}  // namespace gpumon::cli
