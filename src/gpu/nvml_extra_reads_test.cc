// SPDX-License-Identifier: MIT
// NvmlBackend's extra reads (GPM, driver sample buffers, process utilization, PCIe) end to end
// through the fake libnvidia-ml.so.1.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>

#include "fake_nvml/fake_test_env.h"
#include "gpu/nvml_backend.h"
#include "gpu/testing/open_fake_backend.h"

namespace gpumon {
namespace {

using fake::testing::FakeScenario;
using fake::testing::Hooks;
using fake::testing::kFakeLibrary;
using fake::testing::kTimeStandsStill;
using fake::testing::TempScenario;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

std::unique_ptr<NvmlBackend> open_backend() {
  return testing::open_fake_backend();
}

// A backend whose clock and scenario time (started held, kTimeStandsStill) move together, only
// when the test moves them.
struct SteppedBackend {
  testing::ManualSteadyClock clock;
  Hooks hooks = Hooks::get();
  double scenario_s = 0;
  std::unique_ptr<NvmlBackend> backend;

  explicit SteppedBackend(double start_s) : scenario_s(start_s) {
    backend = testing::open_fake_backend(milliseconds(5000), clock.function());
  }
  void advance(milliseconds d) {
    clock.advance(d);
    scenario_s += std::chrono::duration<double>(d).count();
    hooks.set_time(scenario_s);
  }
};

constexpr const char* kGpmScenario = R"({"devices": [
  {"name": "NVIDIA H200", "fields": {"sm_active_pct": 72, "sm_occupancy_pct": 31,
                                     "tensor_active_pct": 45, "dram_bw_util_pct": 58,
                                     "gr_engine_active_pct": 88}},
  {"name": "NVIDIA H200", "unsupported": ["tensor_active_pct"],
   "fields": {"sm_active_pct": 40, "utilization_gpu_pct": 93}},
  {"name": "NVIDIA A100-SXM4-80GB"},
  {"name": "NVIDIA H200", "gpm_supported": false}]})";

TEST(NvmlExtraReads, GpmGivesRatiosOverTheWindowBetweenTwoReads) {
  TempScenario sc(kGpmScenario);
  FakeScenario env(sc.path(), 0, kTimeStandsStill);
  SteppedBackend t(0);
  auto& b = t.backend;
  ASSERT_TRUE(b);
  EXPECT_TRUE(b->gpm_supported(0));
  const auto first = b->read_gpm(0);  // takes the starting sample only
  ASSERT_FALSE(first.has_value());
  EXPECT_EQ(first.why(), Missing::kNotAvailable);
  t.advance(milliseconds(120));
  const auto r = b->read_gpm(0);
  ASSERT_TRUE(r.has_value());
  EXPECT_NEAR(r->sm_active_ratio.value_or(-1), 0.72, 1e-9);
  EXPECT_NEAR(r->sm_occupancy_ratio.value_or(-1), 0.31, 1e-9);
  EXPECT_NEAR(r->tensor_active_ratio.value_or(-1), 0.45, 1e-9);
  EXPECT_NEAR(r->dram_bw_util_ratio.value_or(-1), 0.58, 1e-9);
  EXPECT_NEAR(r->gr_engine_active_ratio.value_or(-1), 0.88, 1e-9);
  EXPECT_DOUBLE_EQ(r->window_s, 0.12);
  t.advance(milliseconds(110));
  const auto again = b->read_gpm(0);  // the next window starts where the last one ended
  ASSERT_TRUE(again.has_value());
  EXPECT_DOUBLE_EQ(again->window_s, 0.11);
}

TEST(NvmlExtraReads, GpmRefusesWindowsUnder100MsWithoutCallingNvml) {
  TempScenario sc(kGpmScenario);
  FakeScenario env(sc.path(), 0, kTimeStandsStill);
  SteppedBackend t(0);
  auto& b = t.backend;
  ASSERT_TRUE(b);
  const Hooks hooks = Hooks::get();
  ASSERT_FALSE(b->read_gpm(0).has_value());
  hooks.reset_counts();
  for (int i = 0; i < 5; ++i) {
    if (i > 0) t.advance(milliseconds(24));  // 96 ms in all
    const auto r = b->read_gpm(0);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.why(), Missing::kNotAvailable);
  }
  EXPECT_EQ(hooks.call_count("nvmlGpmSampleGet"), 0U);
  EXPECT_EQ(hooks.call_count("nvmlGpmMetricsGet"), 0U);
  t.advance(milliseconds(4));
  EXPECT_TRUE(b->read_gpm(0).has_value());
  EXPECT_EQ(hooks.call_count("nvmlGpmSampleGet"), 1U);
  EXPECT_EQ(hooks.call_count("nvmlGpmMetricsGet"), 1U);
}

TEST(NvmlExtraReads, GpmUnsupportedIsFoundOnceAndOneMetricMayBeMissing) {
  TempScenario sc(kGpmScenario);
  FakeScenario env(sc.path(), 0, kTimeStandsStill);
  SteppedBackend t(0);
  auto& b = t.backend;
  ASSERT_TRUE(b);
  const Hooks hooks = Hooks::get();
  hooks.reset_counts();
  for (unsigned gpu : {2U, 3U}) {  // an A100, and an H200 whose scenario turns GPM off
    for (int i = 0; i < 3; ++i) {
      EXPECT_FALSE(b->gpm_supported(gpu));
      const auto r = b->read_gpm(gpu);
      ASSERT_FALSE(r.has_value());
      EXPECT_EQ(r.why(), Missing::kNotSupported);
    }
  }
  EXPECT_EQ(hooks.call_count("nvmlGpmQueryDeviceSupport"), 2U);  // once per GPU
  EXPECT_EQ(hooks.call_count("nvmlGpmSampleGet"), 0U);
  EXPECT_EQ(hooks.call_count("nvmlGpmSampleAlloc"), 0U);

  ASSERT_FALSE(b->read_gpm(1).has_value());
  t.advance(milliseconds(110));
  const auto r = b->read_gpm(1);
  ASSERT_TRUE(r.has_value());
  EXPECT_NEAR(r->sm_active_ratio.value_or(-1), 0.40, 1e-9);
  EXPECT_EQ(r->tensor_active_ratio.why(), Missing::kNotSupported);
  EXPECT_TRUE(r->dram_bw_util_ratio.has_value());
  // The fake's graphics-engine activity follows the GPU utilization unless a scenario says.
  EXPECT_NEAR(r->gr_engine_active_ratio.value_or(-1), 0.93, 1e-9);
}

TEST(NvmlExtraReads, GpmOnALostGpu) {
  TempScenario sc(R"({"devices": [{"name": "NVIDIA H200", "lost_at_s": 0.5}]})");
  FakeScenario env(sc.path(), 0, kTimeStandsStill);
  SteppedBackend t(0);
  auto& b = t.backend;
  ASSERT_TRUE(b);
  ASSERT_FALSE(b->read_gpm(0).has_value());
  t.advance(milliseconds(600));
  const auto r = b->read_gpm(0);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.why(), Missing::kGpuLost);
  EXPECT_TRUE(b->sample(0, MetricGroup::kPower).lost);  // the backend knows it is lost
}

// Every timestamp of `all` is one period after the previous one: no sample lost or repeated.
void expect_contiguous(const std::vector<DriverSample>& all, std::uint64_t period_us) {
  for (std::size_t i = 1; i < all.size(); ++i) {
    const auto step = static_cast<long long>(all[i].timestamp_us - all[i - 1].timestamp_us);
    EXPECT_LE(std::llabs(step - static_cast<long long>(period_us)), 2) << "at sample " << i;
  }
}

TEST(NvmlExtraReads, DriverBuffersLoseNothingAcrossReads) {
  TempScenario sc(R"({"devices": [{"fields": {
      "power_instant_mw": {"periodic": {"min": 400000, "max": 600000, "period_s": 0.5}},
      "utilization_gpu_pct": 87}}]})");
  FakeScenario env(sc.path(), 3, kTimeStandsStill);  // 3 s in: the 2.4 s power buffer is full
  SteppedBackend t(3);
  auto& b = t.backend;
  ASSERT_TRUE(b);
  const auto util = b->read_driver_samples(0, DriverBuffer::kGpuUtilization);
  ASSERT_TRUE(util.has_value());
  EXPECT_EQ(util->samples.size(), 16U);  // 0.0, 0.2, ... 3.0 s: all since t = 0
  expect_contiguous(util->samples, 200000);
  EXPECT_DOUBLE_EQ(util->max.value_or(0), 87.0);

  std::vector<DriverSample> all;
  for (int i = 0; i < 3; ++i) {
    if (i > 0) t.advance(milliseconds(305));  // off the 20 ms grid: no read at a sample's time
    const auto r = b->read_driver_samples(0, DriverBuffer::kPower);
    ASSERT_TRUE(r.has_value());
    ASSERT_FALSE(r->samples.empty());
    EXPECT_LE(r->max.value_or(0), 600.0);
    EXPECT_GE(r->max.value_or(0), r->mean.value_or(1e9));
    EXPECT_GE(r->mean.value_or(0), 400.0);
    if (i == 0) {
      EXPECT_EQ(r->samples.size(), 120U);  // the whole buffer on the first read
    } else {
      EXPECT_EQ(r->samples.size(), 15U);  // one per 20 ms since the last read
    }
    all.insert(all.end(), r->samples.begin(), r->samples.end());
  }
  expect_contiguous(all, 20000);
  EXPECT_EQ(all.size(), 120U + 600 / 20);
}

TEST(NvmlExtraReads, AnEmptyBufferIsNoneNotAnError) {
  FakeScenario env("idle-h200", 0, kTimeStandsStill);
  auto b = open_backend();
  ASSERT_TRUE(b);
  const auto first = b->read_driver_samples(0, DriverBuffer::kGpuUtilization);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->samples.size(), 1U);  // the sample at t = 0
  const auto second = b->read_driver_samples(0, DriverBuffer::kGpuUtilization);
  ASSERT_TRUE(second.has_value());  // NOT_FOUND: nothing newer
  EXPECT_TRUE(second->samples.empty());
  EXPECT_EQ(second->max.why(), Missing::kNotAvailable);
}

// Each buffer asks NVML for its own sampling type: every series here has a value of its own.
TEST(NvmlExtraReads, EachDriverBufferIsItsOwnSeries) {
  TempScenario sc(R"({"devices": [{"fields": {
      "power_instant_mw": 321000, "utilization_gpu_pct": 11, "utilization_memory_pct": 12,
      "encoder_util_pct": 13, "decoder_util_pct": 14, "jpeg_util_pct": 15,
      "ofa_util_pct": 16, "sm_clock_mhz": 1410, "mem_clock_mhz": 2619}}]})");
  FakeScenario env(sc.path(), 1, kTimeStandsStill);
  auto b = open_backend();
  ASSERT_TRUE(b);
  const std::pair<DriverBuffer, double> expected[] = {
      {DriverBuffer::kPower, 321.0},           {DriverBuffer::kGpuUtilization, 11},
      {DriverBuffer::kMemoryUtilization, 12},  {DriverBuffer::kEncoderUtilization, 13},
      {DriverBuffer::kDecoderUtilization, 14}, {DriverBuffer::kJpegUtilization, 15},
      {DriverBuffer::kOfaUtilization, 16},     {DriverBuffer::kSmClock, 1410},
      {DriverBuffer::kMemoryClock, 2619}};
  static_assert(std::size(expected) == kDriverBufferCount);
  for (const auto& [buffer, value] : expected) {
    const auto r = b->read_driver_samples(0, buffer);
    ASSERT_TRUE(r.has_value()) << static_cast<int>(buffer);
    EXPECT_DOUBLE_EQ(r->max.value_or(-1), value) << static_cast<int>(buffer);
  }
}

// The report's details on a GPU lost partway through: every value says so, the GPU is marked
// lost (the next sample re-probes it), and no further call is made.
TEST(NvmlExtraReads, ReportDetailsOfAGpuLostPartway) {
  TempScenario sc(R"({"devices": [
      {"errors": [{"call": "nvmlDeviceGetRepairStatus", "error": "GPU_IS_LOST"}]},
      {"unsupported": ["report_details"]}]})");
  FakeScenario env(sc.path(), 0, kTimeStandsStill);
  auto b = open_backend();
  ASSERT_TRUE(b);
  const ReportDetails lost = b->report_details(0);
  EXPECT_EQ(lost.video_clock_mhz.why(), Missing::kGpuLost);
  EXPECT_EQ(lost.egm_enabled.why(), Missing::kGpuLost);
  EXPECT_EQ(lost.ecc_aggregate.dram_uncorrected.why(), Missing::kGpuLost);
  EXPECT_TRUE(b->sample(0, MetricGroup::kTemperature).lost);
  const ReportDetails none = b->report_details(1);
  EXPECT_EQ(none.c2c_enabled.why(), Missing::kNotSupported);
  EXPECT_EQ(none.recovery_action.why(), Missing::kNotSupported);
  EXPECT_EQ(none.memory_power_average_w.why(), Missing::kNotSupported);
  EXPECT_TRUE(b->report_details(1).remap_histogram.why() == Missing::kNotSupported);
}

TEST(NvmlExtraReads, ProcessUtilizationIsFreshAndNeverOver100) {
  TempScenario sc(R"({"devices": [{"processes": [
      {"pid": 100, "name": "python3", "sm_util_pct": 61, "mem_util_pct": 23},
      {"pid": 101, "name": "bogus", "sm_util_pct": 250},
      {"pid": 102, "name": "idle"}]}]})");
  FakeScenario env(sc.path(), 5, kTimeStandsStill);
  SteppedBackend t(5);
  auto& b = t.backend;
  ASSERT_TRUE(b);
  const auto first = b->process_utilization(0);
  ASSERT_TRUE(first.has_value());
  ASSERT_EQ(first->size(), 1U);  // 101 reported 250 %: dropped; 102 had no utilization
  EXPECT_EQ((*first)[0].pid, 100U);
  EXPECT_EQ((*first)[0].sm_util_pct, 61U);
  EXPECT_EQ((*first)[0].mem_util_pct, 23U);
  const auto repeat = b->process_utilization(0);  // never the same sample twice
  ASSERT_TRUE(repeat.has_value());
  EXPECT_TRUE(repeat->empty());
  t.advance(milliseconds(220));
  const auto later = b->process_utilization(0);
  ASSERT_TRUE(later.has_value());
  ASSERT_EQ(later->size(), 1U);
  EXPECT_EQ((*later)[0].timestamp_us, (*first)[0].timestamp_us + 200000);
}

TEST(NvmlExtraReads, PcieThroughputIsSlowAndAskedOnlyWhileSupported) {
  TempScenario sc(R"({"devices": [
      {"fields": {"pcie_tx_kb_per_s": 12000, "pcie_rx_kb_per_s": 3000}},
      {"unsupported": ["pcie_tx_kb_per_s", "pcie_rx_kb_per_s"]}]})");
  FakeScenario env(sc.path());
  auto b = open_backend();
  ASSERT_TRUE(b);
  const auto t0 = Clock::now();
  const PcieThroughput p = b->pcie_throughput(0);
  EXPECT_GE(std::chrono::duration<double>(Clock::now() - t0).count(), 0.039);  // 2 x 20 ms
  EXPECT_DOUBLE_EQ(p.tx_bytes_per_s.value_or(0), 12000.0 * 1024);
  EXPECT_DOUBLE_EQ(p.rx_bytes_per_s.value_or(0), 3000.0 * 1024);
  const Hooks hooks = Hooks::get();
  hooks.reset_counts();
  for (int i = 0; i < 3; ++i) {
    const PcieThroughput u = b->pcie_throughput(1);
    EXPECT_EQ(u.tx_bytes_per_s.why(), Missing::kNotSupported);
    EXPECT_EQ(u.rx_bytes_per_s.why(), Missing::kNotSupported);
  }
  EXPECT_EQ(hooks.call_count("nvmlDeviceGetPcieThroughput"), 1U);
}

}  // namespace
}  // namespace gpumon
