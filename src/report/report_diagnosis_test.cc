// SPDX-License-Identifier: MIT
// report_diagnosis: the engine's findings, deductions and evidence as the page shows them.
#include "report/report_diagnosis.h"

#include <gtest/gtest.h>

namespace gpumon::report {
namespace {

TEST(ReportDiagnosis, CarriesEveryFieldAndFormatsEvidence) {
  diagnose::Diagnosis d;
  d.health_score = 80;
  d.deductions = {{"data_loader_stall", 20, "GPUs wait for data"}};
  diagnose::Finding f;
  f.id = "data_loader_stall";
  f.severity = diagnose::Severity::kCritical;
  f.confidence = 0.8;
  f.title = "Data loader stall";
  f.summary = "38 % waiting";
  f.add("data_wait_share", 0.3812345);
  f.add("steps", 1200.0);
  f.add("worst_rank", std::string("rank 3"));
  f.start_ms = 1000;
  f.end_ms = 2000;
  f.gpus = {1};
  f.ranks = {3};
  f.advice = "more workers";
  f.deduction = 20;
  d.findings.push_back(f);
  const auto r = report_diagnosis(d);
  EXPECT_EQ(r.health_score, 80);
  ASSERT_EQ(r.findings.size(), 1u);
  const auto& x = r.findings[0];
  EXPECT_EQ(x.severity, "critical");
  // The machine keys and numbers for the JSON, words with units for people.
  EXPECT_EQ(x.evidence[0].key, "data_wait_share");
  EXPECT_EQ(x.evidence[0].value, "0.381");
  EXPECT_TRUE(x.evidence[0].number);
  EXPECT_EQ(x.evidence[0].words, "the worst rank waiting on data 38 % of the step time");
  EXPECT_EQ(x.evidence[1].value, "1200");
  EXPECT_EQ(x.evidence[1].words, "1200 steps");
  EXPECT_EQ(x.evidence[2].value, "rank 3");
  EXPECT_FALSE(x.evidence[2].number);
  EXPECT_EQ(x.start_ms, 1000);
  EXPECT_EQ(x.gpus, std::vector<unsigned>{1});
  EXPECT_EQ(x.deduction, 20);
  EXPECT_EQ(health_text(r), "80 / 100 (-20 data_loader_stall)");
}

}  // namespace
}  // namespace gpumon::report
