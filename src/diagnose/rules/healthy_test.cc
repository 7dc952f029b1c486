// SPDX-License-Identifier: MIT
// Healthy runs of several shapes: no rule may warn. Missing data is never read as 0.
#include <gtest/gtest.h>

#include <cmath>

#include "diagnose/test_builder.h"

namespace gpumon::diagnose {
namespace {

using namespace testing;

// A healthy run: `gpus` GPUs busy for `seconds` at 10 Hz, one rank per GPU with `step_s` steps.
RunData healthy(unsigned gpus, double seconds, double step_s, bool steps = true) {
  RunData run;
  const int n = static_cast<int>(seconds * 10);
  for (unsigned g = 0; g < gpus; ++g) add_gpu(run, g, n);
  if (steps)
    for (unsigned g = 0; g < gpus; ++g)
      add_rank(run, 1000 + g, g, gpus, static_cast<int>(seconds / step_s), step_s);
  return run;
}

TEST(Healthy, ShortSteps) {
  auto run = healthy(1, 120, 0.01);
  const auto d = run_diagnose(run);
  EXPECT_EQ(warnings(d), "");
  EXPECT_EQ(d.health_score, 100);
}

TEST(Healthy, LongSteps) {
  auto run = healthy(2, 600, 5);
  EXPECT_EQ(warnings(run_diagnose(run)), "");
}

TEST(Healthy, EightGpus) {
  auto run = healthy(8, 300, 0.25);
  EXPECT_EQ(warnings(run_diagnose(run)), "");
}

TEST(Healthy, NoStepsRecorded) {
  auto run = healthy(4, 300, 1, false);
  EXPECT_EQ(warnings(run_diagnose(run)), "");
}

TEST(Healthy, NoGpm) {
  auto run = healthy(2, 300, 0.1);
  for (auto& g : run.gpus)
    for (auto& p : g.points) p.sm_active.reset();
  EXPECT_EQ(warnings(run_diagnose(run)), "");
}

TEST(Healthy, MissingFieldsAreNotZero) {
  // Only utilization known: no memory, clocks, power, reasons; steps without GPU time or
  // allocator fields. A missing value must not look like 0 (idle, empty, 0 MHz).
  auto run = healthy(2, 300, 0.1);
  for (auto& g : run.gpus) {
    g.memory_total_bytes.reset(), g.max_sm_clock_mhz.reset();
    for (auto& p : g.points) p = bare_point(p.t_ms, p.util_pct);
  }
  for (auto& s : run.steps) {
    s.gpu_step_s.reset(), s.allocated_bytes.reset(), s.reserved_bytes.reset();
    s.inactive_split_bytes.reset(), s.num_alloc_retries.reset(), s.num_ooms.reset();
  }
  EXPECT_EQ(warnings(run_diagnose(run)), "");
}

TEST(Healthy, EverythingMissing) {
  RunData run;
  add_gpu(run, 0, 100, 100, [](GpuPoint& p, int) { p = bare_point(p.t_ms); });
  add_gpu(run, 1, 0);
  const auto d = run_diagnose(run);
  EXPECT_TRUE(d.findings.empty()) << warnings(d);
  RunData empty;
  EXPECT_TRUE(run_diagnose(empty).findings.empty());
}

TEST(Healthy, NanInputsAreDropped) {
  auto run = healthy(1, 60, 0.1);
  for (std::size_t i = 0; i < run.steps.size(); i += 7) {
    run.steps[i].cpu_step_s = std::nan("");
    run.steps[i].data_wait_s = std::nan("");
    run.steps[i].gpu_step_s = std::nan("");
  }
  EXPECT_EQ(warnings(run_diagnose(run)), "");
}

TEST(Healthy, NoisyStepsAndMemory) {
  auto run = healthy(2, 600, 0.2);
  for (auto& s : run.steps) {
    const double k = (s.step * 7919 % 100) / 100.0;  // deterministic noise
    s.cpu_step_s *= 0.9 + 0.2 * k;
    s.allocated_bytes = static_cast<std::int64_t>(10 * kGiB + k * 300 * kMiB);
  }
  for (auto& g : run.gpus)
    for (std::size_t i = 0; i < g.points.size(); ++i)
      g.points[i].util_pct = 80 + static_cast<double>(i * 31 % 20);
  EXPECT_EQ(warnings(run_diagnose(run)), "");
}

}  // namespace
}  // namespace gpumon::diagnose
