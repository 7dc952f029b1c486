// SPDX-License-Identifier: MIT
#include "diagnose/stats.h"

#include <gtest/gtest.h>

#include <cmath>

namespace gpumon::diagnose {
namespace {

TEST(Stats, MedianAndMean) {
  EXPECT_EQ(median_of({}), std::nullopt);
  EXPECT_EQ(*median_of({3, 1, 2}), 2);
  EXPECT_EQ(*median_of({4, 1, 3, 2}), 2.5);
  EXPECT_EQ(mean_of({}), std::nullopt);
  EXPECT_EQ(*mean_of({1, 2, 3}), 2);
}

TEST(Stats, CoefficientOfVariation) {
  EXPECT_EQ(coefficient_of_variation({5}), std::nullopt);
  EXPECT_EQ(coefficient_of_variation({0, 0}), std::nullopt);
  EXPECT_NEAR(*coefficient_of_variation({1, 3}), 0.5, 1e-12);
}

TEST(Stats, TheilSenIgnoresOutliers) {
  std::vector<double> x, y;
  for (int i = 0; i < 100; ++i) x.push_back(i), y.push_back(2.0 * i + (i % 10 == 0 ? 1000 : 0));
  EXPECT_NEAR(*theil_sen_slope(x, y), 2, 1e-9);
  EXPECT_EQ(theil_sen_slope({1}, {1}), std::nullopt);
  EXPECT_EQ(theil_sen_slope({1, 1}, {1, 2}), std::nullopt);  // no x spread
  // Subsampled above max_points, still right.
  x.clear(), y.clear();
  for (int i = 0; i < 5000; ++i) x.push_back(i), y.push_back(-0.5 * i);
  EXPECT_NEAR(*theil_sen_slope(x, y, 50), -0.5, 1e-9);
}

TEST(Stats, Confidence) {
  EXPECT_EQ(confidence_of(0, 100, 1, 1), 0.5);
  EXPECT_EQ(confidence_of(100, 100, 2, 1), 1);
  EXPECT_EQ(confidence_of(50, 100, 0.25, 0.5, false), 0.875);
  EXPECT_EQ(unit_clamp(std::nan("")), 0);
}

}  // namespace
}  // namespace gpumon::diagnose
