// SPDX-License-Identifier: MIT
#include "diagnose/diagnosis.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "diagnose/evidence_words.h"
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
  add_rank(run, 10, 0, 1, 1000, 0.1, [](training::Step& s, int) { s.data_wait_s = 0.03; });
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
  // Evidence in words with units, not the JSON's keys.
  EXPECT_NE(text.find("  evidence:\n    - the worst rank waiting on data "), std::string::npos)
      << text;
  EXPECT_EQ(text.find("data_wait_share"), std::string::npos) << text;
  RunData empty;
  EXPECT_NE(render_text(run_diagnose(empty), "x").find("no findings"), std::string::npos);
}

// A recording with nothing in it, or one gpumon never closed, must not read as a clean bill.
TEST(Diagnosis, ARecordingWithoutDataHasNoScoreAndOneCutShortSaysSo) {
  RunData empty;
  empty.kind = RunData::Kind::kRecording;
  auto d = run_diagnose(empty);
  EXPECT_FALSE(d.scored);
  ASSERT_EQ(d.findings.size(), 1u);
  EXPECT_EQ(d.findings[0].id, "no_data");
  EXPECT_EQ(d.findings[0].deduction, 0);
  EXPECT_TRUE(to_json(d, "x")["health_score"].is_null());
  EXPECT_NE(render_text(d, "x").find("health score: n/a (no data)"), std::string::npos);

  RunData cut;
  add_gpu(cut, 0, 100);
  cut.kind = RunData::Kind::kRecordingCutShort;
  d = run_diagnose(cut);
  EXPECT_TRUE(d.scored);
  ASSERT_FALSE(d.findings.empty());
  EXPECT_EQ(d.findings[0].id, "recording_cut_short");
  EXPECT_EQ(d.findings[0].deduction, 0);
  EXPECT_EQ(d.health_score, 100);
  EXPECT_NE(d.findings[0].summary.find("cover only the data up to 20"), std::string::npos)
      << d.findings[0].summary;
  // A killed recording whose -wal file went missing: the finding says what is left.
  cut.read_warning = "the recording was not closed and its -wal file is missing";
  EXPECT_NE(run_diagnose(cut).findings[0].summary.find("; the recording was not closed and its "
                                                       "-wal file is missing"),
            std::string::npos);

  RunData live;  // the live window starts empty: nothing to say about it
  EXPECT_TRUE(run_diagnose(live).scored);
  EXPECT_TRUE(run_diagnose(live).findings.empty());
}

// Steps the recording refused are said, with the processes that lost them, and cost no points.
TEST(Diagnosis, StepsTheRecordingRefusedAreSaid) {
  RunData run;
  run.kind = RunData::Kind::kRecording;
  add_gpu(run, 0, 100);
  run.rank_events.push_back({1, 4242, 3, "steps_lost", R"({"steps":900,"reason":"share"})"});
  run.rank_events.push_back({2, 4242, 3, "steps_lost", R"({"steps":100,"reason":"share"})"});
  run.rank_events.push_back({2, 55, std::nullopt, "steps_lost", R"({"steps":7})"});
  run.rank_events.push_back({3, 56, std::nullopt, "steps_lost", "not json"});
  const auto d = run_diagnose(run);
  ASSERT_FALSE(d.findings.empty());
  const Finding& f = d.findings[0];
  EXPECT_EQ(f.id, "steps_not_recorded");
  EXPECT_EQ(f.deduction, 0);
  EXPECT_EQ(d.health_score, 100);
  EXPECT_EQ(f.ranks, std::vector<std::int64_t>{3});
  EXPECT_EQ(f.pids, (std::vector<std::int64_t>{55, 56}));
  EXPECT_NE(f.summary.find("refused 1007 training steps (7 of pid 55, 0 of pid 56, 1000 of rank 3 "
                           "(pid 4242))"),
            std::string::npos)
      << f.summary;
  run.kind = RunData::Kind::kLive;  // the live window is not the recording
  EXPECT_TRUE(run_diagnose(run).findings.empty());
}

TEST(Diagnosis, EvidenceInWordsWithUnits) {
  EXPECT_EQ(evidence_words("gpu5_throttle_share", 0.29), "GPU 5 throttled 29 % of its busy time");
  EXPECT_EQ(evidence_words("throttle_share", 0.29),
            "the worst GPU throttled 29 % of its busy time");
  EXPECT_EQ(evidence_words("gpu5_cause", std::string("thermal")),
            "GPU 5 throttled mostly by temperature (thermal slowdown)");
  EXPECT_EQ(evidence_words("gpu5_max_temp_c", 87.4), "GPU 5 reached 87 \u00b0C");
  EXPECT_EQ(evidence_words("gpu12_mean_sm_clock_mhz", 1755.0), "GPU 12 mean SM clock 1755 MHz");
  EXPECT_EQ(evidence_words("gpu3_power_limit_w", 700.0), "GPU 3 power limit 700 W");
  EXPECT_EQ(evidence_words("corrected", 2.0), "2 corrected ECC error(s)");
  EXPECT_EQ(evidence_words("xid_79", 1.0), "XID 79: 1 time(s)");
  EXPECT_EQ(evidence_words("pid4242_bytes", 2.5 * (1 << 30)),
            "process 4242 uses 2.50 GiB of GPU memory");
  EXPECT_EQ(evidence_words("pid4242_name", std::string("python3")), "process 4242 is python3");
  EXPECT_EQ(evidence_words("mean_data_wait_ms", 42.04), "mean data wait 42.0 ms a step");
  EXPECT_EQ(evidence_words("gap_s", 95.0), "no step for 95.0 s");
  EXPECT_EQ(evidence_words("at_end", 1.0), "still silent at the end of the run: yes");
  EXPECT_EQ(evidence_words("ratio_vs_others", 1.234), "x1.23 the others");
  EXPECT_EQ(evidence_words("util_gap_pct", 31.0),
            "utilization differs by 31.0 percentage points between GPUs");
  EXPECT_EQ(evidence_words("gpu1_mean_util_pct", 41.25), "GPU 1 mean utilization 41.2 %");
  // A key without its own wording: its words, the unit from its suffix.
  EXPECT_EQ(evidence_words("gpu2_queue_wait_ms", 3.0), "GPU 2 queue wait: 3.0 ms");
  EXPECT_EQ(evidence_words("spill_bytes", 512.0 * (1 << 20)), "spill: 512 MiB");
  EXPECT_EQ(evidence_words("odd_share", 0.05), "odd: 5.0 %");
  // Not a prefix: "gpus_lost" names no GPU.
  EXPECT_EQ(evidence_words("gpus_lost", 1.0), "1 GPU(s) lost");
}

// Every key the rules write (docs/DIAGNOSES.md) has its own wording.
TEST(Diagnosis, EveryRuleKeyHasWords) {
  for (const char* key : {"data_wait_share",
                          "mean_data_wait_ms",
                          "mean_step_ms",
                          "steps",
                          "worst_rank",
                          "ranks_stalled",
                          "gpu0_mean_util_pct",
                          "gap_s",
                          "usual_period_s",
                          "limit_s",
                          "at_end",
                          "died_silent",
                          "gpu0_util_during_gap_pct",
                          "corrected",
                          "uncorrected",
                          "gpus_lost",
                          "mean_util_pct",
                          "sm_active",
                          "util_samples",
                          "gpu_time_share",
                          "sm_active_while_busy",
                          "busy_samples",
                          "slope_bytes_per_step",
                          "growth_bytes",
                          "first_allocated_bytes",
                          "last_allocated_bytes",
                          "reserved_minus_allocated_bytes",
                          "share_of_reserved",
                          "inactive_split_bytes",
                          "inactive_split_share",
                          "new_alloc_retries",
                          "caught_ooms",
                          "minutes_to_full",
                          "steps_to_full",
                          "growth_bytes_per_s",
                          "free_bytes",
                          "ranks_oom",
                          "pid1_bytes",
                          "max_foreign_bytes",
                          "ratio_vs_others",
                          "slowest_share",
                          "aligned_steps",
                          "busy_gpus",
                          "world_size",
                          "memory_gap_bytes",
                          "util_cv",
                          "util_gap_pct",
                          "memory_cv",
                          "step_time_cv",
                          "gpu_time_vs_slowest",
                          "busiest_gpu_share_of_step",
                          "median_step_ms",
                          "gpu0_throttle_share",
                          "throttle_share",
                          "gpu0_thermal_share",
                          "gpu0_power_cap_share",
                          "gpu0_hw_slowdown_share",
                          "gpu0_mean_sm_clock_mhz",
                          "gpu0_max_sm_clock_mhz",
                          "gpu0_max_temp_c",
                          "gpu0_power_limit_w",
                          "guard_actions",
                          "oom_splits",
                          "predicted_splits",
                          "merges",
                          "floors_reached",
                          "micro_batch_size",
                          "batch_size",
                          "guard_requested_bytes",
                          "guard_headroom_bytes",
                          "loader_actions",
                          "num_workers",
                          "previous_num_workers",
                          "prefetch_factor",
                          "prefetch_depth",
                          "data_wait_share_before",
                          "data_wait_share_after",
                          "loader_data_wait_share",
                          "loader_cpu_budget_cores",
                          "loader_ram_budget_bytes"}) {
    EXPECT_TRUE(evidence_key_has_words(key)) << key;
    EXPECT_EQ(evidence_words(key, 1.0).find('_'), std::string::npos) << key;
  }
  // Words the rules give as machine tokens read as words too.
  for (const char* key :
       {"source", "pid1_name", "measure", "likely_cause", "explained_by", "cause", "gpu0_cause"}) {
    EXPECT_TRUE(evidence_key_has_words(key)) << key;
    EXPECT_NE(evidence_words(key, std::string("straggler")).find("a straggler rank"),
              std::string::npos)
        << key;
  }
  EXPECT_EQ(evidence_words("measure", std::string("data_wait_s")), "measured by data wait");
  EXPECT_FALSE(evidence_key_has_words("gpu2_queue_wait_ms"));
}

}  // namespace
}  // namespace gpumon::diagnose
