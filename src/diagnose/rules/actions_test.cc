// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include <tuple>

#include "diagnose/evidence_words.h"
#include "diagnose/test_builder.h"
#include "training/protocol.h"

namespace gpumon::diagnose {
namespace {

using namespace testing;

// An action of process `pid` (rank `rank`) `at_s` seconds after kT0Ms.
void act(RunData& run, std::int64_t pid, std::int64_t rank, double at_s, const std::string& body) {
  run.rank_events.push_back(training::rank_event(kT0Ms + static_cast<std::int64_t>(at_s * 1000),
                                                 pid, rank, "action",
                                                 R"({"type":"action",)" + body + "}"));
}

const Finding* find_any(const Diagnosis& d, const std::string& id) {
  return find(d, id, Severity::kInfo);
}

TEST(Actions, AGuardSplitAfterAnOomIsAWarningOnItsRankAndGpu) {
  RunData run;
  add_gpu(run, 0, 600);
  add_gpu(run, 1, 600);
  add_rank(run, 10, 0, 2, 300, 0.1);
  add_rank(run, 11, 1, 2, 300, 0.1, [](training::Step& s, int i) { s.num_ooms = i >= 120; });
  act(run, 11, 1, 12,
      R"("action":"oom_split","step":120,"reason":"oom","batch_size":32,"micro_batch_size":16,)"
      R"("previous_micro_batch_size":32,"summary":"CUDA OOM at step 120: split 32 into 2 x 16",)"
      R"("evidence":{"requested_bytes":2147483648,"headroom_bytes":1048576})");
  const auto d = run_diagnose(run);
  const auto* f = find(d, "oom_guard");
  ASSERT_NE(f, nullptr) << warnings(d);
  EXPECT_EQ(f->severity, Severity::kWarning);
  EXPECT_EQ(f->ranks, std::vector<std::int64_t>{1});
  EXPECT_EQ(f->gpus, std::vector<unsigned>{1});
  EXPECT_EQ(f->start_ms, kT0Ms + 12000);
  EXPECT_NE(f->summary.find("1 split(s) after a CUDA OOM"), std::string::npos) << f->summary;
  EXPECT_NE(f->summary.find("micro-batch 16 of a batch of 32 on rank 1 since step 120"),
            std::string::npos)
      << f->summary;
  EXPECT_EQ(evidence(*f, "oom_splits"), 1);
  EXPECT_EQ(evidence(*f, "micro_batch_size"), 16);
  EXPECT_EQ(evidence(*f, "guard_requested_bytes"), 2147483648.0);
  EXPECT_EQ(evidence(*f, "caught_ooms"), 1) << "num_ooms grew by one on rank 1";
  EXPECT_EQ(evidence_words("guard_requested_bytes", 2147483648.0),
            "the failed allocation asked for 2.00 GiB");
  EXPECT_GT(f->deduction, 0);
  // The OOM it caught is the guard's, not a finding of its own.
  EXPECT_EQ(find_any(d, "oom"), nullptr) << warnings(d);
}

TEST(Actions, APredictedSplitAndAMergeAreInfoAndCostNoPoints) {
  RunData run;
  add_gpu(run, 0, 600);
  add_rank(run, 10, 0, 1, 300, 0.1);
  act(run, 10, 0, 5,
      R"("action":"oom_split","step":50,"reason":"predicted","batch_size":32,)"
      R"("micro_batch_size":16)");
  act(run, 10, 0, 25,
      R"("action":"oom_merge","step":250,"reason":"headroom","batch_size":32,)"
      R"("micro_batch_size":32)");
  const auto d = run_diagnose(run);
  const auto* f = find_any(d, "oom_guard");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kInfo);
  EXPECT_EQ(f->deduction, 0);
  EXPECT_EQ(d.health_score, 100);
  EXPECT_NE(f->summary.find("1 split(s) before a predicted OOM, 1 merge(s)"), std::string::npos)
      << f->summary;
  EXPECT_EQ(evidence(*f, "micro_batch_size"), 32);
  EXPECT_EQ(f->end_ms, kT0Ms + 25000);
}

TEST(Actions, TheFloorIsAWarningThatSaysTheOomWasRaised) {
  RunData run;
  add_rank(run, 10, 0, 1, 100, 0.1);
  act(run, 10, 0, 5, R"("action":"oom_split","reason":"oom","micro_batch_size":1)");
  act(run, 10, 0, 6, R"("action":"oom_floor","reason":"oom","micro_batch_size":1)");
  const auto d = run_diagnose(run);
  const auto* f = find(d, "oom_guard");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->title, "OOM guard reached its floor");
  EXPECT_NE(f->summary.find("at the floor on rank 0 the OOM was raised"), std::string::npos)
      << f->summary;
  EXPECT_NE(f->advice.find("min_micro_batch_size"), std::string::npos);
}

TEST(Actions, ARetuneSaysWhatChangedAndTheDataWaitBeforeAndAfter) {
  RunData run;
  add_gpu(run, 0, 600);
  // Half of each step waits for data until the retune at 20 s, then 5 %.
  add_rank(run, 10, 0, 1, 400, 0.1,
           [](training::Step& s, int i) { s.data_wait_s = i < 200 ? 0.05 : 0.005; });
  act(run, 10, 0, 20,
      R"("action":"loader_retuned","step":200,"epoch":1,"reason":"data_wait","num_workers":4,)"
      R"("previous_num_workers":0,"prefetch_factor":4,"previous_prefetch_factor":2,)"
      R"("evidence":{"data_wait_share":0.5,"cpu_budget_cores":3})");
  const auto d = run_diagnose(run);
  const auto* f = find_any(d, "loader_tuned");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kInfo);
  EXPECT_EQ(f->deduction, 0);
  EXPECT_EQ(f->ranks, std::vector<std::int64_t>{0});
  EXPECT_EQ(f->gpus, std::vector<unsigned>{0});
  EXPECT_NE(f->summary.find("num_workers 0 -> 4, prefetch_factor 2 -> 4; data wait 50% -> 5%"),
            std::string::npos)
      << f->summary;
  EXPECT_NEAR(evidence(*f, "data_wait_share_before"), 0.5, 1e-9);
  EXPECT_NEAR(evidence(*f, "data_wait_share_after"), 0.05, 1e-9);
  EXPECT_EQ(evidence(*f, "loader_cpu_budget_cores"), 3);
  EXPECT_EQ(find_any(d, "loader_limited"), nullptr);
  // The stall is judged on what the loader reached: the 200 steps after the retune wait 5 %.
  EXPECT_EQ(find_any(d, "data_loader_stall"), nullptr) << warnings(d);
}

TEST(Actions, AStallLeftAfterTheRetuneIsJudgedOnTheStepsAfterIt) {
  RunData run;
  add_gpu(run, 0, 600);
  // 80 % until the retune at step 200, then 30 %: a stall of 30 %, from 20 s on.
  add_rank(run, 10, 0, 1, 400, 0.1,
           [](training::Step& s, int i) { s.data_wait_s = i < 200 ? 0.08 : 0.03; });
  act(run, 10, 0, 20, R"("action":"loader_retuned","step":200,"num_workers":2)");
  const auto d = run_diagnose(run);
  const auto* f = find(d, "data_loader_stall");
  ASSERT_NE(f, nullptr) << warnings(d);
  EXPECT_NEAR(evidence(*f, "data_wait_share"), 0.3, 1e-6);
  EXPECT_EQ(evidence(*f, "steps"), 200);
  EXPECT_GE(*f->start_ms, kT0Ms + 20000);
}

TEST(Actions, ALimitedLoaderIsAWarningThatSaysWhereItWasLeftAndWhy) {
  RunData run;
  add_gpu(run, 0, 600);
  add_rank(run, 10, 0, 1, 400, 0.1, [](training::Step& s, int) { s.data_wait_s = 0.04; });
  act(run, 10, 0, 10,
      R"("action":"loader_retuned","num_workers":2,"previous_num_workers":0,)"
      R"("prefetch_factor":2,"previous_prefetch_factor":2)");
  act(run, 10, 0, 20,
      R"("action":"loader_limited","num_workers":2,"prefetch_factor":2,)"
      R"("summary":"4 workers were no faster than 2: left at 2",)"
      R"("evidence":{"data_wait_share":0.4})");
  const auto d = run_diagnose(run);
  const auto* f = find(d, "loader_limited");
  ASSERT_NE(f, nullptr) << warnings(d);
  EXPECT_EQ(f->severity, Severity::kWarning);
  EXPECT_NE(f->summary.find("left rank 0's DataLoader at num_workers 2"), std::string::npos)
      << f->summary;
  EXPECT_NE(f->summary.find("4 workers were no faster than 2"), std::string::npos);
  EXPECT_NE(f->advice.find("lock"), std::string::npos);
  EXPECT_NEAR(evidence(*f, "loader_data_wait_share"), 0.4, 1e-9);
  // The stall it could not fix says the adaptive loader was on, not to turn it on.
  const auto* stall = find(d, "data_loader_stall");
  ASSERT_NE(stall, nullptr);
  EXPECT_NE(stall->advice.find("adaptive loader (mon.wrap(loader, adapt=True)) was on"),
            std::string::npos)
      << stall->advice;
  EXPECT_NE(stall->advice.find("num_workers 2"), std::string::npos);
  EXPECT_NE(stall->advice.find("more workers stopped helping"), std::string::npos);
  EXPECT_EQ(evidence(*stall, "num_workers"), 2);
  EXPECT_NE(find_any(d, "loader_tuned"), nullptr) << "the retune before it is reported too";
}

TEST(Actions, OneOomSplitOnEveryDdpRankCountsOnce) {
  RunData run;
  add_gpu(run, 0, 600);
  add_gpu(run, 1, 600);
  add_rank(run, 10, 0, 2, 300, 0.1);
  add_rank(run, 11, 1, 2, 300, 0.1);
  for (const auto& [pid, rank, reason] : {std::tuple{10, 0, "oom"}, std::tuple{11, 1, "oom"}})
    act(run, pid, rank, 12,
        std::string(R"("action":"oom_split","step":120,"micro_batch_size":16,"reason":")") +
            reason + "\"");
  const auto d = run_diagnose(run);
  const auto* f = find(d, "oom_guard");
  ASSERT_NE(f, nullptr) << warnings(d);
  EXPECT_NE(f->summary.find("acted 1 time(s) on 2 ranks: 1 split(s) after a CUDA OOM"),
            std::string::npos)
      << f->summary;
  EXPECT_EQ(evidence(*f, "oom_splits"), 1);
  EXPECT_EQ(f->ranks, (std::vector<std::int64_t>{0, 1}));
  // Two halvings in one step (32 -> 16 -> 8) are two splits.
  act(run, 10, 0, 13, R"("action":"oom_split","step":120,"micro_batch_size":8,"reason":"oom")");
  const auto d2 = run_diagnose(run);
  EXPECT_EQ(evidence(*find(d2, "oom_guard"), "oom_splits"), 2);
}

TEST(Actions, ALoaderHeldBackByItsBudgetIsNotBlamedOnALock) {
  RunData run;
  add_gpu(run, 0, 600);
  add_rank(run, 10, 0, 1, 400, 0.1, [](training::Step& s, int) { s.data_wait_s = 0.04; });
  act(run, 10, 0, 20,
      R"("action":"loader_limited","reason":"budget","num_workers":1,"prefetch_factor":2)");
  const auto d = run_diagnose(run);
  const auto* f = find(d, "loader_limited");
  ASSERT_NE(f, nullptr) << warnings(d);
  EXPECT_EQ(f->title, "Loader workers held back by the CPU or RAM budget");
  EXPECT_NE(f->summary.find("its CPU or RAM budget allows no more"), std::string::npos)
      << f->summary;
  EXPECT_EQ(f->advice.find("lock"), std::string::npos) << f->advice;
  EXPECT_NE(f->advice.find("reserve_cores"), std::string::npos);
}

TEST(Actions, UnknownOrMalformedActionsAreNotJudged) {
  RunData run;
  add_rank(run, 10, 0, 1, 100, 0.1);
  act(run, 10, 0, 5, R"("action":"something_new","step":3)");
  run.rank_events.push_back(
      training::rank_event(kT0Ms, 10, 0, "action", R"({"action":"oom_split","step":"x"})"));
  const auto d = run_diagnose(run);
  for (const auto& f : d.findings)
    EXPECT_TRUE(f.id != "oom_guard" && f.id != "loader_tuned" && f.id != "loader_limited") << f.id;
}

TEST(Actions, WithoutTheSwitchesTheAdvicePointsAtThem) {
  RunData run;
  add_gpu(run, 0, 600);
  add_rank(run, 10, 0, 1, 400, 0.1, [](training::Step& s, int) { s.data_wait_s = 0.04; });
  const auto d = run_diagnose(run);
  const auto* stall = find(d, "data_loader_stall");
  ASSERT_NE(stall, nullptr);
  EXPECT_NE(stall->advice.find("mon.wrap(loader, adapt=True)"), std::string::npos);
  EXPECT_NE(stall->advice.find("docs/adaptive-loader.md"), std::string::npos);
  RunData oom;
  add_rank(oom, 10, 0, 1, 100, 0.1);
  oom.rank_events.push_back(training::rank_event(kT0Ms + 5000, 10, 0, "oom", R"({"step":50})"));
  const auto d2 = run_diagnose(oom);
  const auto* f = find(d2, "oom");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->advice.find("mon.oom_guard(model)"), std::string::npos);
  EXPECT_NE(f->advice.find("docs/oom-guard.md"), std::string::npos);
}

}  // namespace
}  // namespace gpumon::diagnose
