// SPDX-License-Identifier: MIT
#include "node/process_watcher.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <vector>

namespace gpumon::node {
namespace {

struct Collect final : training::StepSink {
  std::vector<training::ProcessSample> samples;
  void on_step(const training::Step&) override {}
  void on_rank_event(const training::RankEvent&) override {}
  void on_process_sample(const training::ProcessSample& s) override { samples.push_back(s); }
};

training::RankEvent event(std::int64_t pid, std::string kind, std::optional<std::int64_t> rank) {
  training::RankEvent e;
  e.pid = pid, e.kind = std::move(kind), e.rank = rank;
  return e;
}

TEST(ProcessWatcher, SamplesTheProcessesBetweenHelloAndBye) {
  auto out = std::make_shared<Collect>();
  ProcessWatcher w(out, std::make_shared<host::DiskProcFiles>(),
                   std::make_shared<host::DiskProcFiles>("/sys/fs/cgroup"));
  w.sample_once(1);
  EXPECT_TRUE(out->samples.empty());
  w.on_rank_event(event(::getpid(), "hello", 3));
  w.on_rank_event(event(999999999, "hello", 4));  // no such process: no sample
  // A hello whose socket peer is another process (a relay, another pid namespace): the peer
  // is not known to be the rank, so it is not read.
  training::RankEvent relayed = event(7, "hello", 5);
  relayed.peer_pid = ::getpid();
  w.on_rank_event(relayed);
  w.sample_once(2);
  ASSERT_EQ(out->samples.size(), 1U);
  const auto& s = out->samples[0];
  EXPECT_EQ(s.pid, ::getpid());
  EXPECT_EQ(s.rank, 3);
  EXPECT_EQ(s.time_ms, 2);
  EXPECT_TRUE(s.cpu_s.has_value());
  EXPECT_GT(s.total_pss_bytes().value_or(0), 0);
  EXPECT_GT(s.mem_total_bytes.value_or(0), 0);
  w.on_rank_event(event(::getpid(), "bye", 3));
  w.on_rank_event(event(999999999, "disconnect", 4));
  w.on_rank_event(event(7, "dropped", 5));
  EXPECT_EQ(w.watched(), 0U);
  w.sample_once(3);
  EXPECT_EQ(out->samples.size(), 1U);
}

TEST(ProcessWatcher, StopsPromptlyWhileWaiting) {
  auto out = std::make_shared<Collect>();
  ProcessWatcher w(out, std::make_shared<host::DiskProcFiles>(),
                   std::make_shared<host::DiskProcFiles>("/sys/fs/cgroup"),
                   host::ProcessStatsReader::system_options(), std::chrono::hours(1));
  w.start();
  w.stop();
  w.stop();
  SUCCEED();
}

}  // namespace
}  // namespace gpumon::node
