// SPDX-License-Identifier: MIT
// The sampler's reads beyond the cheap sample (GPM, the driver's sample buffers, process
// utilization, PCIe) and its XID/ECC event stream, over gpumon's fake NVML in real time. Each
// test runs until what it checks has happened, however slowly the machine runs it.
#include <gtest/gtest.h>

#include <algorithm>

#include "fake_nvml/fake_test_env.h"
#include "sampler/reader_tasks.h"
#include "sampler/testing/real_run.h"

namespace gpumon {
namespace {

using fake::testing::FakeScenario;
using fake::testing::Hooks;
using fake::testing::kTimeStandsStill;
using std::chrono::milliseconds;
using testing::RealRun;

SamplerConfig fast_readers() {
  SamplerConfig c;
  c.interval = milliseconds(100);
  c.gpm_period = milliseconds(200);
  c.driver_samples_period = milliseconds(200);
  c.utilization_samples_period = milliseconds(200);
  c.process_period = milliseconds(200);
  c.pcie = true;
  c.pcie_period = milliseconds(200);
  return c;
}

// Ticks in which each GPU had its GPM ratios, its power maximum and its PCIe throughput.
struct ReaderCounts {
  std::vector<std::size_t> gpm = std::vector<std::size_t>(8);
  std::vector<std::size_t> power_max = std::vector<std::size_t>(8);
  std::vector<std::size_t> pcie = std::vector<std::size_t>(8);
};

ReaderCounts count_readers(const std::vector<TickSample>& ticks) {
  ReaderCounts c;
  for (const TickSample& t : ticks) {
    for (unsigned gpu = 0; gpu < 8 && gpu < t.gpus.size(); ++gpu) {
      c.gpm[gpu] += t.gpus[gpu].sm_active_ratio.has_value();
      c.power_max[gpu] += t.gpus[gpu].power_max_w.has_value();
      c.pcie[gpu] += t.gpus[gpu].pcie_rx_bytes_per_s.has_value();
    }
  }
  return c;
}

std::size_t processes_with_utilization(const std::vector<ProcessSnapshot>& snapshots) {
  std::size_t n = 0;
  for (const ProcessSnapshot& snap : snapshots) {
    for (const GpuProcess& p : snap.processes) n += p.sm_util_pct.has_value();
  }
  return n;
}

TEST(SamplerReaders, DemoFillsGpmDriverBuffersPcieAndProcessUtilization) {
  FakeScenario env("demo");
  RealRun run(fast_readers());
  ASSERT_TRUE(run.sampler);
  // Every 200 ms (less the first GPM read, which only starts the window) until each GPU has
  // three GPM and power readings. PCIe blocks about 2 x 20 ms per GPU (the fake plays the
  // driver's counting window), so its bounded rate stretches it: 8 GPUs x 40 ms / 5 % of a
  // core = 6.4 s; its first round still reads every GPU within the first period.
  ASSERT_TRUE(run.until([&] {
    const ReaderCounts c = count_readers(run.sink->ticks());
    for (unsigned gpu = 0; gpu < 8; ++gpu) {
      if (c.gpm[gpu] < 3 || c.power_max[gpu] < 3 || c.pcie[gpu] < 1) return false;
    }
    return processes_with_utilization(run.sink->processes()) >= 8;
  }));
  run.stop();
  const auto ticks = run.sink->ticks();
  for (unsigned gpu = 0; gpu < 8; ++gpu) {
    for (const TickSample& t : ticks) {
      const DeviceSample& s = t.gpus.at(gpu);
      if (s.sm_active_ratio) {
        // demo: SM active 60-85 %, tensor 31-58 %, over the window since the previous read.
        EXPECT_GE(*s.sm_active_ratio, 0.55);
        EXPECT_LE(*s.sm_active_ratio, 0.90);
        EXPECT_GE(*s.tensor_active_ratio, 0.25);
        EXPECT_LE(*s.tensor_active_ratio, 0.65);
        ASSERT_TRUE(s.gpm_window_s.has_value());
        EXPECT_GE(*s.gpm_window_s, 0.1);  // never under NVML's minimum
      }
      if (s.utilization_gpu_max_pct) {
        EXPECT_LE(*s.utilization_gpu_max_pct, 100U);
      }
      if (s.power_max_w) {
        EXPECT_GE(*s.power_max_w, 300.0);
        EXPECT_LE(*s.power_max_w, 800.0);
      }
      if (s.pcie_rx_bytes_per_s) {
        EXPECT_GT(*s.pcie_rx_bytes_per_s, 0.0);
      }
    }
  }
  // Process utilization merged into the process lists (demo: python3 at about 95 % SM).
  for (const ProcessSnapshot& snap : run.sink->processes()) {
    for (const GpuProcess& p : snap.processes) {
      if (!p.sm_util_pct) continue;
      EXPECT_GE(*p.sm_util_pct, 85U);
      EXPECT_LE(*p.sm_util_pct, 100U);
    }
  }
  const SamplerStats stats = run.sampler->stats();
  const auto has_task = [&](const char* name) {
    return std::any_of(stats.tasks.begin(), stats.tasks.end(),
                       [&](const TaskStats& t) { return t.name == name && t.runs > 0; });
  };
  EXPECT_TRUE(has_task("gpm"));
  EXPECT_TRUE(has_task("power_samples"));
  EXPECT_TRUE(has_task("utilization_samples"));
  EXPECT_TRUE(has_task("pcie"));
  for (const TaskStats& t : stats.tasks) {
    if (t.name == "pcie") {
      EXPECT_GE(t.period, std::chrono::seconds(2));
    }
    if (t.name == "gpm") {
      EXPECT_GE(t.period, milliseconds(200));  // more only if its measured cost stretched it
    }
  }
}

TEST(SamplerReaders, GpuWithoutGpmSaysNotSupported) {
  FakeScenario env("unsupported");  // a GeForce RTX 4090: no GPM
  RealRun run(fast_readers());
  ASSERT_TRUE(run.sampler);
  std::size_t marked = 0;
  ASSERT_TRUE(run.until([&] {
    marked = 0;
    for (const TickSample& t : run.sink->ticks()) {
      const DeviceSample& s = t.gpus.at(0);
      if (!s.sm_active_ratio && s.sm_active_ratio.why() == Missing::kNotSupported) ++marked;
    }
    return marked >= 1;
  }));
  run.stop();
  for (const TickSample& t : run.sink->ticks()) EXPECT_FALSE(t.gpus.at(0).sm_active_ratio);
}

TEST(SamplerReaders, XidAndEccEventsReachEventsAndSinks) {
  FakeScenario env("xid", /*offset_s=*/2.9, kTimeStandsStill);  // XID 13 on GPU 0 at 3 s
  RealRun run(milliseconds(50));
  ASSERT_TRUE(run.sampler);
  ASSERT_TRUE(run.until([&] { return run.ticks() >= 1; }));
  Hooks::get().set_time(3.1);
  ASSERT_TRUE(run.until([&] { return !run.sink->events().empty(); }));
  run.stop();
  const auto events = run.sink->events();
  ASSERT_EQ(events.size(), 1U);
  EXPECT_EQ(events[0].gpu, 0U);
  EXPECT_EQ(events[0].kind, GpuEvent::Kind::kXid);
  EXPECT_EQ(events[0].value, 13U);
  const auto ring = run.sampler->events().latest(100);
  ASSERT_EQ(ring.size(), 1U);
  EXPECT_EQ(ring[0].value, 13U);
  const SamplerStats s = run.sampler->stats();
  EXPECT_TRUE(s.events_watched);
  EXPECT_EQ(s.events_received, 1U);
  EXPECT_EQ(s.events_dropped, 0U);
}

TEST(SamplerReaders, EventsOffMeansNoStream) {
  FakeScenario env("xid", /*offset_s=*/3.1, kTimeStandsStill);  // XID 13 is due
  SamplerConfig c;
  c.interval = milliseconds(50);
  c.events = false;
  RealRun run(c);
  ASSERT_TRUE(run.sampler);
  ASSERT_TRUE(run.until([&] { return run.ticks() >= 5; }));
  run.stop();
  EXPECT_TRUE(run.sink->events().empty());
  EXPECT_FALSE(run.sampler->stats().events_watched);
}

TEST(SamplerReaders, MergeProcessUtilizationByPid) {
  std::vector<GpuProcess> procs(3);
  procs[0].pid = 10;
  procs[1].pid = 11;
  procs[2].pid = 12;
  std::vector<ProcessUtilization> util{{11, 5, 80, 20}, {10, 6, 7, 3}};
  merge_process_utilization(procs, util);
  EXPECT_EQ(procs[0].sm_util_pct, Reading<unsigned>(7));
  EXPECT_EQ(procs[1].mem_util_pct, Reading<unsigned>(20));
  EXPECT_EQ(procs[2].sm_util_pct.why(), Missing::kNotAvailable);  // no sample for it
  merge_process_utilization(
      procs, Reading<std::vector<ProcessUtilization>>::missing(Missing::kNotSupported));
  EXPECT_EQ(procs[0].sm_util_pct.why(), Missing::kNotSupported);
}

TEST(SamplerReaders, HistoryIsBoundedByMemoryForManyGpus) {
  SamplerConfig c;
  EXPECT_EQ(history_ticks(c, 8), 3600U);  // 8 GPUs: an hour at 1 s fits the budget
  const std::size_t fleet = history_ticks(c, 256);
  EXPECT_LT(fleet, 3600U);
  EXPECT_GE(fleet, 100U);
  EXPECT_LE(fleet * 256 * sizeof(DeviceSample), c.history_max_bytes);
  c.history_max_bytes = 1;
  EXPECT_EQ(history_ticks(c, 8), 1U);
}

TEST(SamplerReaders, GpmPeriodUnder100MsIsRefused) {
  SamplerConfig c;
  c.gpm_period = milliseconds(50);
  EXPECT_THROW(validate(c), std::invalid_argument);
  c.gpm = false;
  EXPECT_NO_THROW(validate(c));
}

}  // namespace
}  // namespace gpumon
