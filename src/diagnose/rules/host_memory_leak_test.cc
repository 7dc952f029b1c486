// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include "diagnose/test_builder.h"

namespace gpumon::diagnose {
namespace {

using namespace testing;

// One sample a second of process `pid` (rank `rank`) for `n` s from kT0Ms: PSS `pss(i)` in
// the process, 100 MiB in 2 workers, a host with `available` bytes left.
void add_samples(RunData& run, std::int64_t pid, std::optional<std::int64_t> rank, int n,
                 const std::function<double(int)>& pss, double available = 16 * kGiB) {
  for (int i = 0; i < n; ++i) {
    training::ProcessSample s;
    s.time_ms = kT0Ms + i * 1000, s.pid = pid, s.rank = rank;
    s.cpu_s = 0.9 * i;
    s.pss_bytes = static_cast<std::int64_t>(pss(i));
    s.rss_bytes = s.pss_bytes;
    s.workers = 2, s.workers_pss_bytes = static_cast<std::int64_t>(100 * kMiB);
    s.mem_available_bytes = static_cast<std::int64_t>(available - pss(i));
    s.mem_total_bytes = static_cast<std::int64_t>(32 * kGiB);
    run.process_samples.push_back(s);
  }
}

TEST(HostMemoryLeak, SteadyGrowthIsFoundWithAForecast) {
  // The case: 0.24 -> 2.4 GB in 30 s, on a host with 16 GiB available.
  RunData run;
  add_rank(run, 10, 0, 1, 300, 0.1);
  add_samples(run, 10, 0, 31, [](int i) { return 0.24e9 + i * 0.072e9; });
  const auto d = run_diagnose(run);
  const auto* f = find(d, "host_memory_leak");
  ASSERT_NE(f, nullptr) << warnings(d);
  EXPECT_EQ(f->ranks, std::vector<std::int64_t>{0});
  EXPECT_NEAR(evidence(*f, "growth_bytes_per_s"), 0.072e9, 1e6);
  // Over the samples after the 10 warm-up steps (1.1 s): 28 s of the 30.
  EXPECT_NEAR(evidence(*f, "span_s"), 28, 1e-9);
  EXPECT_NEAR(evidence(*f, "pss_growth_bytes"), 28 * 0.072e9, 1e7);
  // Room at the end: 16 GiB - 2.4 GB, at 72 MB/s.
  EXPECT_NEAR(evidence(*f, "minutes_to_full"), (16 * kGiB - 2.4e9) / 0.072e9 / 60, 0.1);
  EXPECT_EQ(f->severity, Severity::kCritical);  // ~3.4 min left
  EXPECT_EQ(evidence(*f, "workers"), 2);
}

TEST(HostMemoryLeak, WorkersAreCountedWhileAllOfThemRan) {
  // At the run's end the DataLoader stops its workers one at a time: the newest sample sees
  // one of two, but the finding names both and their memory.
  RunData run;
  add_rank(run, 10, 0, 1, 300, 0.1);
  add_samples(run, 10, 0, 31, [](int i) { return 0.24e9 + i * 0.072e9; });
  auto& last = run.process_samples.back();
  last.workers = 1, last.workers_pss_bytes = static_cast<std::int64_t>(10 * kMiB);
  const auto d = run_diagnose(run);
  const auto* f = find(d, "host_memory_leak");
  ASSERT_NE(f, nullptr) << warnings(d);
  EXPECT_EQ(evidence(*f, "workers"), 2);
  EXPECT_EQ(evidence(*f, "workers_pss_bytes"), 100 * kMiB);
}

TEST(HostMemoryLeak, TheShutdownAfterTheLastSampleWithEveryWorkerIsLeftOut) {
  // The run ends: its workers exit and the process frees its data. The last samples (no
  // workers, PSS back to 80 MB) are not the leak's end, whose figures stop before them.
  RunData run;
  add_rank(run, 10, 0, 1, 300, 0.1);
  add_samples(run, 10, 0, 31, [](int i) { return 0.24e9 + i * 0.072e9; });
  for (int k = 0; k < 2; ++k) {
    training::ProcessSample s = run.process_samples.back();
    s.time_ms += 1000, s.pss_bytes = s.rss_bytes = 80'000'000;
    s.workers = 0, s.workers_pss_bytes = 0;
    run.process_samples.push_back(s);
  }
  const auto d = run_diagnose(run);
  const auto* f = find(d, "host_memory_leak");
  ASSERT_NE(f, nullptr) << warnings(d);
  EXPECT_NEAR(evidence(*f, "last_pss_bytes"), 0.24e9 + 30 * 0.072e9 + 100 * kMiB, 1);
  EXPECT_NEAR(evidence(*f, "span_s"), 28, 1e-9);
  EXPECT_EQ(evidence(*f, "workers_pss_bytes"), 100 * kMiB);
}

TEST(HostMemoryLeak, SlowLeakWithRoomIsAWarning) {
  RunData run;
  add_rank(run, 10, 0, 1, 3000, 0.1);
  add_samples(
      run, 10, 0, 300, [](int i) { return 1e9 + i * 2e6; }, 200 * kGiB);
  const auto d = run_diagnose(run);
  const auto* f = find(d, "host_memory_leak");
  ASSERT_NE(f, nullptr) << warnings(d);
  EXPECT_EQ(f->severity, Severity::kWarning);
  EXPECT_GT(evidence(*f, "minutes_to_full"), 60);
}

TEST(HostMemoryLeak, CgroupLimitIsTheRoomWhenSmaller) {
  RunData run;
  add_samples(
      run, 10, std::nullopt, 31, [](int i) { return 0.24e9 + i * 0.072e9; }, 500 * kGiB);
  for (auto& s : run.process_samples)
    s.cgroup_limit_bytes = static_cast<std::int64_t>(4 * kGiB),
    s.cgroup_usage_bytes = *s.pss_bytes + *s.workers_pss_bytes;
  const auto d = run_diagnose(run);
  const auto* f = find(d, "host_memory_leak");
  ASSERT_NE(f, nullptr) << warnings(d);
  EXPECT_EQ(f->pids, std::vector<std::int64_t>{10});  // no rank: named by pid
  std::string limit;
  for (const auto& [k, val] : f->evidence)
    if (k == "limit") limit = std::get<std::string>(val);
  EXPECT_EQ(limit, "cgroup_limit");
  EXPECT_LT(evidence(*f, "minutes_to_full"), 1);
}

TEST(HostMemoryLeak, NearMissFlatWithNoise) {
  RunData run;
  add_rank(run, 10, 0, 1, 600, 0.1);
  add_samples(run, 10, 0, 60, [](int i) { return 2e9 + ((i * 7919) % 13) * 20e6; });
  EXPECT_EQ(find(run_diagnose(run), "host_memory_leak"), nullptr);
}

TEST(HostMemoryLeak, NearMissOneJumpThenFlat) {
  // Workers start, or a dataset is cached once: a step up, then flat.
  RunData run;
  add_rank(run, 10, 0, 1, 600, 0.1);
  add_samples(run, 10, 0, 60, [](int i) { return i < 25 ? 1e9 : 3e9; });
  EXPECT_EQ(find(run_diagnose(run), "host_memory_leak"), nullptr);
}

TEST(HostMemoryLeak, NearMissTooShortOrTooSmall) {
  RunData shorter;
  add_samples(shorter, 10, 0, 8, [](int i) { return 1e9 + i * 100e6; });
  EXPECT_EQ(find(run_diagnose(shorter), "host_memory_leak"), nullptr);
  RunData small;
  add_samples(small, 10, 0, 60, [](int i) { return 1e9 + i * 2e6; });  // 120 MB
  EXPECT_EQ(find(run_diagnose(small), "host_memory_leak"), nullptr);
}

TEST(HostMemoryLeak, MissingPssIsNotZero) {
  RunData run;
  add_samples(run, 10, 0, 60, [](int i) { return 1e9 + i * 100e6; });
  for (std::size_t i = 0; i < run.process_samples.size(); i += 2)
    run.process_samples[i].pss_bytes.reset();  // every other sample unreadable
  const auto d = run_diagnose(run);
  const auto* f = find(d, "host_memory_leak");
  ASSERT_NE(f, nullptr) << warnings(d);
  EXPECT_NEAR(evidence(*f, "growth_bytes_per_s"), 100e6, 1e6);
}

}  // namespace
}  // namespace gpumon::diagnose
