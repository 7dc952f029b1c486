// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include "diagnose/test_builder.h"

namespace gpumon::diagnose {
namespace {

using namespace testing;

TEST(Hardware, CorrectedEccEventsWarn) {
  RunData run;
  add_gpu(run, 0, 100);
  add_gpu(run, 3, 100);
  run.events.push_back({3, kT0Ms + 5000, "ecc_single_bit", 2});
  const auto d = run_diagnose(run);
  const auto* f = find(d, "ecc_errors");
  ASSERT_NE(f, nullptr) << warnings(d);
  EXPECT_EQ(f->severity, Severity::kWarning);
  EXPECT_EQ(f->gpus, std::vector<unsigned>{3});
  EXPECT_EQ(evidence(*f, "corrected"), 2);
}

TEST(Hardware, EccCounterThatGrewDuringTheRun) {
  RunData run;
  add_gpu(run, 0, 100, 100, [](GpuPoint& p, int i) { p.ecc_uncorrected = i < 50 ? 3 : 4; });
  const auto diagnosis = run_diagnose(run);
  const auto* f = find(diagnosis, "ecc_errors");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kCritical);
}

TEST(Hardware, NearMissOldEccCountsDoNotCount) {
  RunData run;
  add_gpu(run, 0, 100, 100, [](GpuPoint& p, int) { p.ecc_corrected = 17; });
  EXPECT_EQ(find(run_diagnose(run), "ecc_errors", Severity::kInfo), nullptr);
}

TEST(Hardware, XidSeverityByCode) {
  RunData run;
  add_gpu(run, 0, 100);
  run.events.push_back({0, kT0Ms + 1000, "xid", 13});
  auto d = run_diagnose(run);
  ASSERT_NE(find(d, "xid"), nullptr);
  EXPECT_EQ(find(d, "xid")->severity, Severity::kWarning);
  run.events.push_back({0, kT0Ms + 2000, "xid", 79});
  d = run_diagnose(run);
  EXPECT_EQ(find(d, "xid")->severity, Severity::kCritical);
  EXPECT_EQ(evidence(*find(d, "xid"), "xid_79"), 1);
}

TEST(Hardware, LostGpuFromEventsOrSamples) {
  RunData run;
  add_gpu(run, 0, 100);
  add_gpu(run, 1, 100, 100, [](GpuPoint& p, int i) {
    if (i > 80) p = bare_point(p.t_ms), p.lost = true;
  });
  const auto diagnosis = run_diagnose(run);
  const auto* f = find(diagnosis, "gpu_lost");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->gpus, std::vector<unsigned>{1});
  EXPECT_EQ(f->severity, Severity::kCritical);
}

}  // namespace
}  // namespace gpumon::diagnose
