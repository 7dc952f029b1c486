// SPDX-License-Identifier: MIT
#include "report/downsample.h"

#include <gtest/gtest.h>

#include <cmath>

namespace gpumon::report {
namespace {

TEST(TimeGrid, BucketEdgesAreHalfOpenAndTheEndsClamp) {
  const TimeGrid g = make_grid(10'000, 19'999, 100, 10);
  EXPECT_EQ(g.width_ms, 1000);
  EXPECT_EQ(g.count, 10u);
  EXPECT_EQ(g.bucket(10'000), 0u);
  EXPECT_EQ(g.bucket(10'999), 0u);
  EXPECT_EQ(g.bucket(11'000), 1u);
  EXPECT_EQ(g.bucket(19'999), 9u);
  EXPECT_EQ(g.bucket(25'000), 9u);  // later than the grid: the last bucket
  EXPECT_EQ(g.bucket(9'000), 0u);   // earlier: the first
  EXPECT_EQ(g.center_ms(0), 10'500);
}

TEST(TimeGrid, BucketsAreAtLeastTwoSamplingIntervalsWide) {
  // 10 samples 1 s apart: 1500 buckets would leave most empty (false gaps).
  const TimeGrid g = make_grid(0, 9'000, 1'000, 1500);
  EXPECT_EQ(g.width_ms, 2000);
  EXPECT_EQ(g.count, 5u);
}

TEST(TimeGrid, ALongRunGetsAtMostTheBucketsAsked) {
  const std::int64_t day_ms = 24LL * 3600 * 1000;
  const TimeGrid g = make_grid(0, day_ms - 100, 100, 1500);
  EXPECT_LE(g.count, 1500u);
  EXPECT_GE(g.count, 1499u);
  EXPECT_EQ(g.bucket(day_ms - 100), g.count - 1);
}

TEST(TimeGrid, NoTimeNoBuckets) {
  EXPECT_EQ(make_grid(5, 4, 0, 100).count, 0u);
  const TimeGrid one = make_grid(5, 5, 0, 100);  // a single sample
  EXPECT_EQ(one.count, 1u);
  EXPECT_EQ(one.bucket(5), 0u);
}

TEST(BucketSeries, AOneSampleSpikeSurvivesInTheMax) {
  const TimeGrid g = make_grid(0, 86'399'900, 100, 1000);  // 24 h at 10 Hz
  BucketSeries s(g.count);
  for (std::int64_t t = 0; t < 86'400'000; t += 100)
    s.add(g.bucket(t), t == 43'200'000 ? 95.0 : 10.0);
  const auto& spiky = s.at(g.bucket(43'200'000));
  EXPECT_EQ(spiky.max, 95.0);
  EXPECT_EQ(spiky.min, 10.0);
  EXPECT_NEAR(*spiky.mean(), 10.0 + 85.0 / spiky.count, 1e-9);
  EXPECT_EQ(s.at(0).max, 10.0);
  EXPECT_EQ(s.at(g.count - 1).max, 10.0);
}

TEST(BucketSeries, MissingAndNonFiniteValuesLeaveGapsNotZeros) {
  BucketSeries s(4);
  EXPECT_FALSE(s.any());
  s.add(0, 3.0);
  s.add(0, 5.0);
  s.add(1, std::nan(""));
  s.add(2, INFINITY);
  s.add(9, 1.0);  // beyond the grid: ignored
  EXPECT_TRUE(s.any());
  EXPECT_EQ(s.at(0).count, 2u);
  EXPECT_EQ(*s.at(0).mean(), 4.0);
  EXPECT_EQ(s.at(1).count, 0u);
  EXPECT_FALSE(s.at(1).mean().has_value());
  EXPECT_EQ(s.at(2).count, 0u);
  EXPECT_EQ(s.at(3).count, 0u);
}

}  // namespace
}  // namespace gpumon::report
