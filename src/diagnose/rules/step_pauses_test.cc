// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include <cmath>

#include "diagnose/test_builder.h"

namespace gpumon::diagnose {
namespace {

using namespace testing;

// 3.4 ms steps; every 50th step also holds `pause_s` in the part `edit` puts it in.
RunData paused_run(double pause_s, int every, void (*put)(training::Step&, double)) {
  RunData run;
  double shift = 0;
  add_rank(run, 10, 0, 1, 4000, 0.0034, [&](training::Step& s, int i) {
    s.t_start_s += shift, s.t_end_s += shift;
    if (i % every == every - 1) {
      put(s, pause_s);
      shift += pause_s;
    }
  });
  add_gpu(run, 0, static_cast<int>((4000 * 0.0034 + shift) * 10));  // until the last step
  return run;
}

void in_body(training::Step& s, double p) {
  s.cpu_step_s += p, s.t_end_s += p;
}
void in_wait(training::Step& s, double p) {
  s.cpu_step_s += p, s.data_wait_s = s.data_wait_s.value_or(0) + p, s.t_end_s += p;
}
void between(training::Step& s, double p) {
  s.t_start_s += p, s.t_end_s += p;
}

TEST(StepPauses, APeriodicCheckpointTakesMostOfTheWallTime) {
  // The run: median step 3.4 ms, a 1 s checkpoint every 50th step.
  auto run = paused_run(1.0, 50, in_body);
  const auto d = run_diagnose(run);
  const auto* f = find(d, "step_pauses");
  ASSERT_NE(f, nullptr) << warnings(d);
  EXPECT_EQ(f->severity, Severity::kCritical);
  EXPECT_NEAR(evidence(*f, "pause_share"), 0.85, 0.03);
  EXPECT_NEAR(evidence(*f, "period_steps"), 50, 0.5);
  EXPECT_NEAR(evidence(*f, "median_pause_s"), 1.0, 0.01);
  EXPECT_NE(f->summary.find("every 50 steps"), std::string::npos) << f->summary;
  EXPECT_NE(f->summary.find("inside the step"), std::string::npos) << f->summary;
  EXPECT_NE(f->advice.find("checkpoint"), std::string::npos);
  EXPECT_EQ(find(d, "hang", Severity::kInfo), nullptr) << "pauses are not a hang";
}

TEST(StepPauses, WhereThePauseIsSaysWhatToDo) {
  // Long waits for data every 40th step: the loader stall's "few long waits", one finding.
  auto waits = paused_run(0.2, 40, in_wait);
  const auto d = run_diagnose(waits);
  EXPECT_EQ(find(d, "step_pauses", Severity::kInfo), nullptr);
  const auto* f = find(d, "data_loader_stall");
  ASSERT_NE(f, nullptr) << warnings(d);
  EXPECT_NE(f->summary.find("a few long waits"), std::string::npos) << f->summary;
  EXPECT_NE(f->advice.find("prefetch the next shard"), std::string::npos);
  auto outside = paused_run(0.2, 40, between);
  const auto d2 = run_diagnose(outside);
  const auto* g = find(d2, "step_pauses");
  ASSERT_NE(g, nullptr) << warnings(d2);
  EXPECT_NE(g->summary.find("between the timed steps"), std::string::npos) << g->summary;
}

TEST(StepPauses, IrregularPausesHaveNoPeriod) {
  RunData run;
  add_gpu(run, 0, 230);
  double shift = 0;
  add_rank(run, 10, 0, 1, 3000, 0.005, [&](training::Step& s, int i) {
    s.t_start_s += shift, s.t_end_s += shift;
    if (i == 100 || i == 130 || i == 900 || i == 1000 || i == 2700) {
      in_body(s, 1.5);
      shift += 1.5;
    }
  });
  const auto d = run_diagnose(run);
  const auto* f = find(d, "step_pauses");
  ASSERT_NE(f, nullptr) << warnings(d);
  EXPECT_EQ(f->severity, Severity::kWarning);
  EXPECT_TRUE(std::isnan(evidence(*f, "period_steps")));
}

TEST(StepPauses, NearMisses) {
  // Pauses costing 10 % of the wall time, and a jittery but pause-free run (every 7th step
  // takes 12 ms instead of 3.4: past 5 usual periods, not 50 ms past the usual).
  auto small = paused_run(0.02, 50, in_body);
  EXPECT_EQ(find(run_diagnose(small), "step_pauses", Severity::kInfo), nullptr);
  auto jitter = paused_run(0.0086, 7, in_body);
  EXPECT_EQ(find(run_diagnose(jitter), "step_pauses", Severity::kInfo), nullptr);
  // Two long pauses only: phases, not a pattern.
  RunData two;
  add_gpu(two, 0, 250);
  double shift = 0;
  add_rank(two, 10, 0, 1, 3000, 0.005, [&](training::Step& s, int i) {
    s.t_start_s += shift, s.t_end_s += shift;
    if (i == 500 || i == 1500) in_body(s, 5), shift += 5;
  });
  EXPECT_EQ(find(run_diagnose(two), "step_pauses", Severity::kInfo), nullptr);
}

}  // namespace
}  // namespace gpumon::diagnose
