// SPDX-License-Identifier: MIT
// Which steps the recording's queue takes: a flooding process loses only its own steps, and the
// losses come out as steps_lost rank events naming it.
#include "record/step_shares.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace gpumon::record::detail {
namespace {

training::Step step_of(std::int64_t pid, std::optional<std::int64_t> rank = std::nullopt) {
  training::Step s;
  s.pid = pid;
  s.rank = rank;
  return s;
}

training::RankEvent event(std::int64_t pid, const char* kind) {
  return {1, pid, std::nullopt, kind, "{}", std::nullopt};
}

int admitted(StepShares& shares, std::int64_t pid, int tries) {
  int n = 0;
  for (int i = 0; i < tries; ++i) n += shares.admit(step_of(pid, 7)) ? 1 : 0;
  return n;
}

TEST(StepShares, AFloodingProcessFillsOnlyItsShare) {
  StepShares shares(100);
  shares.on_rank_event(event(1, "hello"));
  shares.on_rank_event(event(2, "hello"));
  EXPECT_EQ(admitted(shares, 1, 1000), 50);  // the flood, first
  EXPECT_EQ(admitted(shares, 2, 50), 50);    // the other process still has its whole share
  const auto lost = shares.take_losses(1234, false);
  ASSERT_EQ(lost.size(), 1U);
  EXPECT_EQ(lost[0].pid, 1);
  EXPECT_EQ(lost[0].rank, 7);
  EXPECT_EQ(lost[0].kind, "steps_lost");
  EXPECT_EQ(lost[0].time_ms, 1234);
  const auto detail = nlohmann::json::parse(lost[0].detail);
  EXPECT_EQ(detail["steps"], 950);
  EXPECT_NE(detail["reason"].get<std::string>().find("its share of the recording queue (50 "),
            std::string::npos);
  EXPECT_TRUE(shares.take_losses(1235, false).empty());  // reported once
}

// A process flooding for hours adds one event every 10 s, not one per commit; the last losses
// are reported when the recording closes.
TEST(StepShares, ALongFloodIsReportedEveryTenSeconds) {
  StepShares shares(10);
  std::vector<std::int64_t> reported;
  for (std::int64_t t = 0; t <= 25'000; t += 500) {
    admitted(shares, 1, 11);  // one over, every commit
    shares.on_taken();
    for (const auto& e : shares.take_losses(t, false)) {
      reported.push_back(t);
      EXPECT_EQ(nlohmann::json::parse(e.detail)["steps"], t == 0 ? 1 : 20);
    }
  }
  EXPECT_EQ(reported, (std::vector<std::int64_t>{0, 10'000, 20'000}));
  const auto last = shares.take_losses(25'100, true);
  ASSERT_EQ(last.size(), 1U);
  EXPECT_EQ(nlohmann::json::parse(last[0].detail)["steps"], 10);  // 20'500 .. 25'000
  EXPECT_TRUE(shares.take_losses(25'200, true).empty());
}

TEST(StepShares, AProcessWithoutHelloCountsAsPresentOnceItSendsSteps) {
  StepShares shares(100);
  EXPECT_EQ(admitted(shares, 1, 60), 60);  // alone: the whole queue is its share... up to now
  EXPECT_EQ(admitted(shares, 2, 60), 40);  // two: 50 each, but only 40 left in the queue
  EXPECT_EQ(admitted(shares, 1, 1), 0);    // over its share of two
}

TEST(StepShares, AProcessThatLeftFreesItsShare) {
  StepShares shares(90);
  for (std::int64_t pid : {1, 2, 3}) shares.on_rank_event(event(pid, "hello"));
  EXPECT_EQ(admitted(shares, 1, 100), 30);
  shares.on_rank_event(event(2, "bye"));
  shares.on_rank_event(event(3, "disconnect"));
  EXPECT_EQ(admitted(shares, 1, 100), 60);  // alone now: the whole queue
}

TEST(StepShares, ACommitEmptiesTheQueue) {
  StepShares shares(10);
  EXPECT_EQ(admitted(shares, 1, 20), 10);
  EXPECT_EQ(shares.queued(), 10U);
  shares.on_taken();
  EXPECT_EQ(shares.queued(), 0U);
  EXPECT_EQ(admitted(shares, 1, 20), 10);
}

TEST(StepShares, AFullQueueIsToldApartFromAnOverShare) {
  StepShares shares(4);
  for (std::int64_t pid : {1, 2, 3, 4}) EXPECT_EQ(admitted(shares, pid, 1), 1);
  EXPECT_EQ(admitted(shares, 5, 3), 0);  // a newcomer: the queue is full
  const auto lost = shares.take_losses(1, false);
  ASSERT_EQ(lost.size(), 1U);
  EXPECT_NE(nlohmann::json::parse(lost[0].detail)["reason"].get<std::string>().find("was full"),
            std::string::npos);
}

}  // namespace
}  // namespace gpumon::record::detail
