// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include "diagnose/test_builder.h"

namespace gpumon::diagnose {
namespace {

using namespace testing;

RunData recorded_run(CommandEnd end) {
  RunData run;
  run.kind = RunData::Kind::kRecording;
  add_gpu(run, 0, 300);
  add_rank(run, 10, 0, 1, 100, 0.2);
  run.command_end = end;
  return run;
}

TEST(RunEnd, ACleanExitIsNoFinding) {
  RunData clean = recorded_run({0, "", 0});
  EXPECT_EQ(find(run_diagnose(clean), "run_failed"), nullptr);
  RunData not_recorded;  // serve, agent: nothing is known of a command
  add_rank(not_recorded, 10, 0, 1, 100, 0.2);
  EXPECT_EQ(find(run_diagnose(not_recorded), "run_failed"), nullptr);
}

TEST(RunEnd, AnErrorExitSaysTheStatusAndTheLastStep) {
  RunData run = recorded_run({1, "", std::nullopt});
  const auto d = run_diagnose(run);
  const auto* f = find(d, "run_failed");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kCritical);
  EXPECT_GT(f->deduction, 0);
  EXPECT_NE(f->summary.find("exited with status 1; last steps: rank 0 at step 99 ("),
            std::string::npos)
      << f->summary;
  EXPECT_NE(f->advice.find("traceback"), std::string::npos);
  EXPECT_EQ(f->ranks, std::vector<std::int64_t>{0});
}

TEST(RunEnd, AKillForMemoryIsToldFromAnotherKill) {
  RunData killed_for_memory = recorded_run({137, "SIGKILL", 1});
  const auto d1 = run_diagnose(killed_for_memory);
  const auto* oom = find(d1, "run_failed");
  ASSERT_NE(oom, nullptr);
  EXPECT_NE(oom->summary.find("killed by SIGKILL (exit status 137): the kernel's OOM killer"),
            std::string::npos)
      << oom->summary;
  EXPECT_NE(oom->advice.find("ran out of memory"), std::string::npos);
  RunData killed = recorded_run({137, "SIGKILL", 0});
  const auto d2 = run_diagnose(killed);
  const auto* other = find(d2, "run_failed");
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(other->summary.find("OOM"), std::string::npos) << other->summary;
  EXPECT_NE(other->advice.find("scheduler"), std::string::npos);
}

// Without gpumon record (an agent, serve): the exception a rank sent is the finding.
TEST(RunEnd, AnUncaughtExceptionARankSentIsAFailure) {
  RunData run;
  run.kind = RunData::Kind::kRecording;
  add_gpu(run, 0, 300);
  add_rank(run, 10, 0, 1, 100, 0.2);
  run.rank_events.push_back({1, 10, 0, "error",
                             R"({"type":"error","exception":"ValueError","message":"bad value",)"
                             R"("where":"train.py:42 in step_fn","step":99})"});
  const auto d = run_diagnose(run);
  const auto* f = find(d, "run_failed");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->summary.find("rank 0 raised ValueError: bad value (train.py:42 in step_fn) at step "
                            "99; last steps: rank 0 at step 99"),
            std::string::npos)
      << f->summary;
  RunData stopped;  // Ctrl-C is the user's choice, not a failure
  add_rank(stopped, 10, 0, 1, 100, 0.2);
  stopped.rank_events.push_back({1, 10, 0, "error", R"({"exception":"KeyboardInterrupt"})"});
  EXPECT_EQ(find(run_diagnose(stopped), "run_failed"), nullptr);
  RunData odd;  // a recording is input too: fields of the wrong type are skipped, never thrown
  add_rank(odd, 10, 0, 1, 100, 0.2);
  odd.rank_events.push_back({1, 10, 0, "error", R"({"exception":"E","message":3,"where":[1]})"});
  odd.rank_events.push_back({2, 10, 0, "error", R"({"exception":{}})"});
  const auto d3 = run_diagnose(odd);
  const auto* f3 = find(d3, "run_failed");
  ASSERT_NE(f3, nullptr);
  EXPECT_NE(f3->summary.find("rank 0 raised E; last steps"), std::string::npos) << f3->summary;
}

}  // namespace
}  // namespace gpumon::diagnose
