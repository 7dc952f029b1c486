// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include "diagnose/test_builder.h"
#include "diagnose/throttle.h"

namespace gpumon::diagnose {
namespace {

using namespace testing;

RunData throttled_every(int k, std::uint64_t reason, double clock = 1400) {
  RunData run;
  add_gpu(run, 0, 1000);
  add_gpu(run, 1, 1000, 100, [&](GpuPoint& p, int i) {
    if (i % k == 0) p.clock_reasons = reason, p.sm_clock_mhz = clock, p.temp_c = 88;
  });
  return run;
}

TEST(Throttled, ThermalNamedAsTheCause) {
  auto run = throttled_every(2, kClockEventSwThermalSlowdown);
  const auto d = run_diagnose(run);
  const auto* f = find(d, "throttled");
  ASSERT_NE(f, nullptr) << warnings(d);
  EXPECT_EQ(f->gpus, std::vector<unsigned>{1});
  EXPECT_NEAR(evidence(*f, "throttle_share"), 0.5, 1e-9);
  EXPECT_EQ(std::get<std::string>(f->evidence[1].second), "thermal");
  EXPECT_EQ(evidence(*f, "gpu1_max_temp_c"), 88);
}

TEST(Throttled, PowerCap) {
  auto run = throttled_every(1, kClockEventSwPowerCap);
  const auto diagnosis = run_diagnose(run);
  const auto* f = find(diagnosis, "throttled");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kCritical);
  EXPECT_NE(f->title.find("power_cap"), std::string::npos);
}

TEST(Throttled, NearMissRareDips) {
  auto run = throttled_every(10, kClockEventSwPowerCap);  // 10% of the time
  EXPECT_EQ(find(run_diagnose(run), "throttled"), nullptr);
}

TEST(Throttled, ReasonAtMaxClockIsNotThrottling) {
  auto run = throttled_every(1, kClockEventSwPowerCap, 1975);
  EXPECT_EQ(find(run_diagnose(run), "throttled"), nullptr);
}

TEST(Throttled, PowerCapAtDefaultLoadIsNormal) {
  // A dense GEMM on an H200 runs at its 700 W cap at ~88% of max clock all the time.
  auto run = throttled_every(1, kClockEventSwPowerCap, 1740);
  EXPECT_EQ(find(run_diagnose(run), "throttled"), nullptr);
}

TEST(Throttled, IdleGpuIsNotJudged) {
  RunData run;
  add_gpu(run, 0, 1000, 100, [](GpuPoint& p, int) {
    p.util_pct = 0, p.clock_reasons = kClockEventSwThermalSlowdown | 0x1, p.sm_clock_mhz = 300;
  });
  EXPECT_EQ(find(run_diagnose(run), "throttled"), nullptr);
}

TEST(Throttled, BucketsCountLikeSamples) {
  RunData run;
  auto& g = add_gpu(run, 0, 0);
  GpuPoint b;
  b.t_ms = kT0Ms, b.span_ms = 100000, b.samples = 1000, b.util_pct = 90,
  b.clock_reasons = kClockEventHwThermalSlowdown;
  b.thermal_samples = 400;
  g.points.push_back(b);
  const auto diagnosis = run_diagnose(run);
  const auto* f = find(diagnosis, "throttled");
  ASSERT_NE(f, nullptr);
  EXPECT_NEAR(evidence(*f, "throttle_share"), 0.4, 1e-9);
}

}  // namespace
}  // namespace gpumon::diagnose
