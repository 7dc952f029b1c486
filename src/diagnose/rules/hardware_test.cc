// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "diagnose/test_builder.h"

namespace gpumon::diagnose {
namespace {

using namespace testing;

TEST(Hardware, AFewCorrectedEccErrorsAreInformation) {
  // ECC correcting a bit is the memory working: no warning, no points off the score.
  RunData run;
  add_gpu(run, 0, 100);
  add_gpu(run, 3, 100);
  run.events.push_back({3, kT0Ms + 5000, "ecc_single_bit", 2});
  const auto d = run_diagnose(run);
  EXPECT_EQ(find(d, "ecc_errors"), nullptr) << warnings(d);
  const auto* f = find(d, "ecc_errors", Severity::kInfo);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kInfo);
  EXPECT_EQ(f->gpus, std::vector<unsigned>{3});
  EXPECT_EQ(evidence(*f, "corrected"), 2);
  EXPECT_EQ(f->deduction, 0);
  EXPECT_EQ(d.health_score, 100);
}

TEST(Hardware, CorrectedEccErrorsAtARisingRateWarn) {
  const Thresholds t;
  // A run shorter than an hour counts as an hour: the count itself is compared.
  auto corrected_in_ten_seconds = [&](int n) {
    RunData run;
    add_gpu(run, 0, 100, 100, [n](GpuPoint& p, int i) { p.ecc_corrected = i < 50 ? 5 : 5 + n; });
    return run_diagnose(run, t);
  };
  const int at = static_cast<int>(t.ecc_corrected_per_hour);
  auto d = corrected_in_ten_seconds(at - 1);
  EXPECT_EQ(find(d, "ecc_errors"), nullptr) << warnings(d);
  d = corrected_in_ten_seconds(at);
  const auto* f = find(d, "ecc_errors");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kWarning);
  EXPECT_EQ(evidence(*f, "corrected_per_hour"), at);

  // Over four hours the same count is a quarter of the rate: information.
  RunData run;
  add_gpu(run, 0, 240, 60'000, [at](GpuPoint& p, int i) { p.ecc_corrected = i < 120 ? 0 : at; });
  d = run_diagnose(run, t);
  EXPECT_EQ(find(d, "ecc_errors"), nullptr) << warnings(d);
  ASSERT_NE(find(d, "ecc_errors", Severity::kInfo), nullptr);
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

std::vector<const Finding*> xid_findings(const Diagnosis& d) {
  std::vector<const Finding*> out;
  for (const auto& f : d.findings)
    if (f.id == "xid") out.push_back(&f);
  std::sort(out.begin(), out.end(), [](auto* a, auto* b) { return a->gpus < b->gpus; });
  return out;
}

TEST(Hardware, EachGpuHasItsOwnXidFindingClassedByCode) {
  RunData run;
  add_gpu(run, 0, 100);
  add_gpu(run, 1, 100);
  add_gpu(run, 2, 100);
  run.events.push_back({0, kT0Ms + 1000, "xid", 13});
  run.events.push_back({1, kT0Ms + 2000, "xid", 94});
  run.events.push_back({1, kT0Ms + 2500, "xid", 94});
  run.events.push_back({2, kT0Ms + 3000, "xid", 4242});
  const auto d = run_diagnose(run);
  const auto x = xid_findings(d);
  ASSERT_EQ(x.size(), 3u) << warnings(d);

  EXPECT_EQ(x[0]->gpus, std::vector<unsigned>{0});
  EXPECT_EQ(x[0]->severity, Severity::kWarning);
  EXPECT_EQ(evidence(*x[0], "xid_13"), 1);
  EXPECT_TRUE(std::isnan(evidence(*x[0], "xid_94"))) << "GPU 1's code is not GPU 0's";
  EXPECT_NE(x[0]->summary.find("graphics engine exception"), std::string::npos) << x[0]->summary;
  EXPECT_NE(x[0]->advice.find("training code"), std::string::npos) << x[0]->advice;
  EXPECT_EQ(x[0]->advice.find("drain"), std::string::npos) << x[0]->advice;

  EXPECT_EQ(x[1]->gpus, std::vector<unsigned>{1});
  EXPECT_EQ(x[1]->severity, Severity::kCritical);
  EXPECT_EQ(evidence(*x[1], "xid_94"), 2);
  EXPECT_TRUE(std::isnan(evidence(*x[1], "xid_13")));
  EXPECT_NE(x[1]->summary.find("contained ECC error"), std::string::npos) << x[1]->summary;
  EXPECT_NE(x[1]->advice.find("drain the node"), std::string::npos) << x[1]->advice;
  EXPECT_NE(x[1]->advice.find("dmesg"), std::string::npos) << x[1]->advice;
  EXPECT_EQ(x[1]->advice.find("training code"), std::string::npos) << x[1]->advice;

  EXPECT_EQ(x[2]->gpus, std::vector<unsigned>{2});
  EXPECT_EQ(x[2]->severity, Severity::kWarning);
  EXPECT_NE(x[2]->advice.find("NVIDIA's XID catalog"), std::string::npos) << x[2]->advice;
}

TEST(Hardware, AGpuWithBothClassesIsCriticalWithBothAdvices) {
  RunData run;
  add_gpu(run, 0, 100);
  run.events.push_back({0, kT0Ms + 1000, "xid", 31});
  run.events.push_back({0, kT0Ms + 2000, "xid", 48});
  const auto d = run_diagnose(run);
  const auto x = xid_findings(d);
  ASSERT_EQ(x.size(), 1u);
  EXPECT_EQ(x[0]->severity, Severity::kCritical);
  EXPECT_LT(x[0]->advice.find("drain the node"), x[0]->advice.find("training code"))
      << "hardware first: " << x[0]->advice;
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
