// SPDX-License-Identifier: MIT
#include "fake_nvml/series.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace gpumon::fake {
namespace {

Series points(std::vector<Series::Point> p, bool linear = false, double repeat_s = 0) {
  Series s;
  s.kind = Series::Kind::kPoints;
  s.points = std::move(p);
  s.linear = linear;
  s.repeat_s = repeat_s;
  return s;
}

TEST(Series, ConstantIsConstant) {
  Series s;
  s.value = 42.5;
  EXPECT_DOUBLE_EQ(evaluate(s, 0), 42.5);
  EXPECT_DOUBLE_EQ(evaluate(s, 1e6), 42.5);
}

TEST(Series, RampHoldsBeforeAndAfter) {
  Series s;
  s.kind = Series::Kind::kRamp;
  s.from = 10;
  s.to = 110;
  s.start_s = 5;
  s.duration_s = 10;
  EXPECT_DOUBLE_EQ(evaluate(s, 0), 10);
  EXPECT_DOUBLE_EQ(evaluate(s, 5), 10);
  EXPECT_DOUBLE_EQ(evaluate(s, 7.5), 35);
  EXPECT_DOUBLE_EQ(evaluate(s, 15), 110);
  EXPECT_DOUBLE_EQ(evaluate(s, 100), 110);
}

TEST(Series, StepHoldsTheLastPointAndTheFirstBeforeIt) {
  const Series s = points({{2, 1}, {4, 3}, {9, 7}});
  EXPECT_DOUBLE_EQ(evaluate(s, 0), 1);
  EXPECT_DOUBLE_EQ(evaluate(s, 2), 1);
  EXPECT_DOUBLE_EQ(evaluate(s, 3.99), 1);
  EXPECT_DOUBLE_EQ(evaluate(s, 4), 3);
  EXPECT_DOUBLE_EQ(evaluate(s, 8.9), 3);
  EXPECT_DOUBLE_EQ(evaluate(s, 9), 7);
  EXPECT_DOUBLE_EQ(evaluate(s, 1e9), 7);
}

TEST(Series, LinearPointsInterpolate) {
  const Series s = points({{0, 0}, {10, 100}, {20, 0}}, true);
  EXPECT_DOUBLE_EQ(evaluate(s, 5), 50);
  EXPECT_DOUBLE_EQ(evaluate(s, 15), 50);
  EXPECT_DOUBLE_EQ(evaluate(s, 25), 0);  // holds the last one without repeat
}

TEST(Series, RepeatWrapsAndLinearInterpolatesAcrossTheWrap) {
  const Series hold = points({{0, 1}, {1, 2}}, false, 2);
  EXPECT_DOUBLE_EQ(evaluate(hold, 0.5), 1);
  EXPECT_DOUBLE_EQ(evaluate(hold, 1.5), 2);
  EXPECT_DOUBLE_EQ(evaluate(hold, 2.5), 1);
  EXPECT_DOUBLE_EQ(evaluate(hold, 1001.5), 2);
  const Series linear = points({{0, 0}, {1, 10}}, true, 2);
  EXPECT_DOUBLE_EQ(evaluate(linear, 1.5), 5);  // halfway from 10 back to 0 at t=2
  EXPECT_DOUBLE_EQ(evaluate(linear, 2.5), 5);
}

TEST(Series, PeriodicShapes) {
  Series s;
  s.kind = Series::Kind::kPeriodic;
  s.min = 10;
  s.max = 20;
  s.period_s = 4;
  s.shape = Series::Shape::kSine;
  EXPECT_NEAR(evaluate(s, 0), 15, 1e-9);
  EXPECT_NEAR(evaluate(s, 1), 20, 1e-9);
  EXPECT_NEAR(evaluate(s, 3), 10, 1e-9);
  s.shape = Series::Shape::kSquare;
  EXPECT_DOUBLE_EQ(evaluate(s, 1), 20);
  EXPECT_DOUBLE_EQ(evaluate(s, 3), 10);
  s.duty = 0.25;
  EXPECT_DOUBLE_EQ(evaluate(s, 0.9), 20);
  EXPECT_DOUBLE_EQ(evaluate(s, 1.1), 10);
  s.shape = Series::Shape::kSawtooth;
  EXPECT_DOUBLE_EQ(evaluate(s, 2), 15);
  EXPECT_DOUBLE_EQ(evaluate(s, 6), 15);
  s.shape = Series::Shape::kTriangle;
  EXPECT_DOUBLE_EQ(evaluate(s, 1), 15);
  EXPECT_DOUBLE_EQ(evaluate(s, 2), 20);
  EXPECT_DOUBLE_EQ(evaluate(s, 3), 15);
  s.phase_s = 1;  // shifts the wave earlier by one second
  EXPECT_DOUBLE_EQ(evaluate(s, 1), 20);
  EXPECT_DOUBLE_EQ(evaluate(s, -1), 10);  // negative times wrap too
}

TEST(Series, NoiseIsBoundedDeterministicAndVaries) {
  Series s;
  s.value = 100;
  s.noise = 5;
  s.noise_stream = 7;
  double lo = 1e9, hi = -1e9;
  for (int i = 0; i < 2000; ++i) {
    const double t = i * 0.001;
    const double v = evaluate(s, t);
    EXPECT_EQ(v, evaluate(s, t));
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  EXPECT_GE(lo, 95);
  EXPECT_LE(hi, 105);
  EXPECT_LT(lo, 96);  // it does use the range
  EXPECT_GT(hi, 104);
  Series other = s;
  other.noise_stream = 8;
  EXPECT_NE(evaluate(s, 0.5), evaluate(other, 0.5));
}

TEST(Series, ClampAppliesAfterNoise) {
  Series s;
  s.value = 99;
  s.noise = 50;
  s.clamp_min = 0;
  s.clamp_max = 100;
  for (int i = 0; i < 500; ++i) {
    const double v = evaluate(s, i * 0.013);
    EXPECT_GE(v, 0);
    EXPECT_LE(v, 100);
  }
}

TEST(Series, ToUnsignedRoundsAndClamps) {
  EXPECT_EQ(to_unsigned(-3, 100), 0U);
  EXPECT_EQ(to_unsigned(std::nan(""), 100), 0U);
  EXPECT_EQ(to_unsigned(2.4, 100), 2U);
  EXPECT_EQ(to_unsigned(2.6, 100), 3U);
  EXPECT_EQ(to_unsigned(1e30, 100), 100U);
  EXPECT_EQ(to_unsigned(1e30, ~0ULL), ~0ULL);
}

TEST(RunningIntegral, IntegratesConstantPowerExactly) {
  Series watts;
  watts.value = 500000;  // mW
  RunningIntegral e;
  EXPECT_DOUBLE_EQ(e.at(watts, 0), 0);
  EXPECT_NEAR(e.at(watts, 1), 500000, 1e-6);  // mJ
  EXPECT_NEAR(e.at(watts, 10.005), 5002500, 1e-3);
}

TEST(RunningIntegral, MatchesARampAndDoesNotDependOnReadOrder) {
  Series ramp;
  ramp.kind = Series::Kind::kRamp;
  ramp.from = 0;
  ramp.to = 1000;
  ramp.duration_s = 10;
  RunningIntegral forward;
  double last = 0;
  for (double t = 0.3; t < 10; t += 0.37) {
    const double v = forward.at(ramp, t);
    EXPECT_GT(v, last);  // energy never goes down while power is positive
    last = v;
    EXPECT_NEAR(v, 50 * t * t, 0.05);
  }
  RunningIntegral jump;
  EXPECT_NEAR(jump.at(ramp, 9.99), forward.at(ramp, 9.99), 1e-6);
  EXPECT_NEAR(jump.at(ramp, 2), 200, 0.05);  // going back restarts from 0
}

TEST(RunningIntegral, CatchesUpALongWayInBoundedSteps) {
  Series s;
  s.value = 1000;
  RunningIntegral e;
  EXPECT_NEAR(e.at(s, 1e7), 1e10, 1e3);  // 1e7 s would be 5e8 steps at 20 ms
}

}  // namespace
}  // namespace gpumon::fake
