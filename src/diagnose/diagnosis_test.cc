// SPDX-License-Identifier: MIT
#include "diagnose/diagnosis.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "diagnose/test_builder.h"

namespace gpumon::diagnose {
namespace {

using namespace testing;

TEST(Diagnosis, ScoreIsOneHundredMinusDeductionsSortedBySeverity) {
  RunData run;
  add_gpu(run, 0, 1000);
  add_rank(run, 10, 0, 1, 500, 0.1, [](training::Step& s, int) { s.data_wait_s = 0.03; });
  run.events.push_back({0, kT0Ms + 1000, "xid", 79});
  const auto d = run_diagnose(run);
  ASSERT_GE(d.findings.size(), 2u);
  EXPECT_EQ(d.findings[0].id, "xid");
  EXPECT_EQ(d.findings[0].severity, Severity::kCritical);
  int sum = 0;
  for (const auto& x : d.deductions) {
    sum += x.points;
    EXPECT_FALSE(x.reason.empty());
  }
  EXPECT_EQ(d.health_score, 100 - sum);
  EXPECT_EQ(d.findings[0].deduction, 35);  // confidence 1
}

TEST(Diagnosis, ScoreClampsAtZero) {
  RunData run;
  add_gpu(run, 0, 100);
  for (int i = 0; i < 8; ++i) {
    add_gpu(run, 1 + i, 100);
    run.events.push_back({static_cast<unsigned>(1 + i), kT0Ms, "xid", 79});
    run.events.push_back({static_cast<unsigned>(1 + i), kT0Ms, "lost", 0});
    run.events.push_back({static_cast<unsigned>(1 + i), kT0Ms, "ecc_double_bit", 1});
  }
  run.rank_events.push_back({kT0Ms, 3, 0, "oom", "{}"});
  EXPECT_EQ(run_diagnose(run).health_score, 0);
}

TEST(Diagnosis, JsonFollowsTheContract) {
  RunData run;
  add_gpu(run, 0, 1000);
  add_rank(run, 10, 0, 1, 500, 0.1, [](training::Step& s, int) { s.data_wait_s = 0.03; });
  const auto d = run_diagnose(run);
  const auto j = to_json(d, "run.gpumon");
  EXPECT_EQ(j["schema"], 1);
  EXPECT_EQ(j["recording"], "run.gpumon");
  EXPECT_EQ(j["health_score"], d.health_score);
  ASSERT_EQ(j["findings"].size(), 1u);
  const auto& f = j["findings"][0];
  EXPECT_EQ(f["id"], "data_loader_stall");
  EXPECT_EQ(f["severity"], "warning");
  EXPECT_TRUE(f["confidence"].is_number());
  EXPECT_TRUE(f["evidence"]["data_wait_share"].is_number());
  EXPECT_EQ(f["gpus"], nlohmann::json::array({0}));
  EXPECT_EQ(f["ranks"], nlohmann::json::array({0}));
  EXPECT_TRUE(f["start_ms"].is_number_integer());
  EXPECT_EQ(j["deductions"][0]["finding"], "data_loader_stall");
  // --min-severity filters the list, not the score.
  const auto c = to_json(d, "run.gpumon", Severity::kCritical);
  EXPECT_TRUE(c["findings"].empty());
  EXPECT_EQ(c["health_score"], d.health_score);
}

TEST(Diagnosis, TextNamesFindingsAndScore) {
  RunData run;
  add_gpu(run, 0, 1000);
  add_rank(run, 10, 0, 1, 500, 0.1, [](training::Step& s, int) { s.data_wait_s = 0.03; });
  const auto text = render_text(run_diagnose(run), "run.gpumon");
  EXPECT_NE(text.find("health score: "), std::string::npos);
  EXPECT_NE(text.find("[warning] Data loader stall"), std::string::npos);
  EXPECT_NE(text.find("advice: "), std::string::npos);
  RunData empty;
  EXPECT_NE(render_text(run_diagnose(empty), "x").find("no findings"), std::string::npos);
}

}  // namespace
}  // namespace gpumon::diagnose
