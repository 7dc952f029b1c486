// SPDX-License-Identifier: MIT
// NvmlBackend end to end: gpumon's real loader and backend over the fake libnvidia-ml.so.1,
// driven by the scenarios in testdata/scenarios.
#include "gpu/nvml_backend.h"

#include <gtest/gtest.h>

#include <chrono>
#include <set>

#include "fake_nvml/fake_test_env.h"
#include "gpu/metric_catalog.h"
#include "gpu/testing/open_fake_backend.h"

namespace gpumon {
namespace {

using fake::testing::FakeScenario;
using fake::testing::Hooks;
using fake::testing::kFakeLibrary;
using fake::testing::kTimeStandsStill;
using fake::testing::TempScenario;
using std::chrono::milliseconds;
using testing::ManualSteadyClock;

std::unique_ptr<NvmlBackend> open_backend(milliseconds lost_retry = milliseconds(5000)) {
  return testing::open_fake_backend(lost_retry);
}

NvmlOpenError open_error(const std::string& library = kFakeLibrary) {
  NvmlOpenOptions options;
  options.library_path = library;
  NvmlOpenError error;
  EXPECT_EQ(NvmlBackend::open(options, &error), nullptr);
  return error;
}

TEST(NvmlBackend, MissingOrBrokenLibrary) {
  const NvmlOpenError missing = open_error("/nonexistent/libnvidia-ml.so.1");
  EXPECT_EQ(missing.kind, NvmlOpenError::Kind::kNoDriver);
  EXPECT_NE(missing.message.find("cannot load NVML"), std::string::npos) << missing.message;
  const NvmlOpenError stub = open_error(GPUMON_TEST_STUB_NVML_PATH);
  EXPECT_EQ(stub.kind, NvmlOpenError::Kind::kBadLibrary);
  EXPECT_NE(stub.message.find("nvmlShutdown"), std::string::npos) << stub.message;
}

TEST(NvmlBackend, InitErrorsGiveDistinctActionableMessages) {
  std::set<std::string> messages;
  for (const auto& [scenario, code] : {std::pair{"init-no-driver", NVML_ERROR_DRIVER_NOT_LOADED},
                                       {"init-no-permission", NVML_ERROR_NO_PERMISSION},
                                       {"init-rm-mismatch", NVML_ERROR_LIB_RM_VERSION_MISMATCH}}) {
    FakeScenario env(scenario);
    const NvmlOpenError e = open_error();
    EXPECT_EQ(e.nvml_code, code) << scenario;
    EXPECT_EQ(e.kind, code == NVML_ERROR_DRIVER_NOT_LOADED ? NvmlOpenError::Kind::kNoDriver
                                                           : NvmlOpenError::Kind::kInitFailed);
    messages.insert(e.message);
  }
  ASSERT_EQ(messages.size(), 3U);
  const std::string all = *messages.begin() + *std::next(messages.begin()) + *messages.rbegin();
  EXPECT_NE(all.find("Driver Not Loaded"), std::string::npos) << all;  // the fake's nvmlErrorString
  EXPECT_NE(all.find("modprobe nvidia"), std::string::npos);
  EXPECT_NE(all.find("/dev/nvidia"), std::string::npos);
  EXPECT_NE(all.find("Reboot"), std::string::npos);
}

TEST(NvmlBackend, StaticInfoOfTheDemo) {
  FakeScenario env("demo");
  auto b = open_backend();
  ASSERT_TRUE(b);
  const SystemInfo& sys = b->system();
  EXPECT_EQ(sys.driver_version.value_or(""), "580.159.04");
  EXPECT_EQ(sys.cuda_driver_version.value_or(0), 13000);
  EXPECT_EQ(sys.simulated_scenario, "demo");
  EXPECT_EQ(sys.library_path, kFakeLibrary);
  ASSERT_EQ(b->device_count(), 8U);
  std::set<std::string> uuids;
  for (unsigned i = 0; i < 8; ++i) {
    b->sample(i, MetricGroup::kStaticDetails);
    const DeviceStatic& d = b->device(i);
    EXPECT_EQ(d.index, i);
    EXPECT_EQ(d.name.value_or(""), "NVIDIA H200");
    EXPECT_EQ(d.memory_total_bytes.value_or(0), 150754820096ULL);
    EXPECT_EQ(d.max_sm_clock_mhz.value_or(0), 1980U);
    EXPECT_EQ(d.max_mem_clock_mhz.value_or(0), 3201U);
    EXPECT_EQ(d.minor_number.value_or(99), i);
    EXPECT_EQ(d.pci_device_id.value_or(0), 0x233510DEU);
    EXPECT_TRUE(d.persistence_mode.value_or(false));
    EXPECT_TRUE(d.ecc_enabled.value_or(false));
    EXPECT_EQ(d.vbios_version.value_or(""), "96.00.A5.00.1A");
    EXPECT_EQ(d.compute_mode.value_or(99), 0U);
    EXPECT_FALSE(d.mig_mode_current.value_or(true));
    EXPECT_FALSE(d.mig_mode_pending.value_or(true));
    EXPECT_EQ(d.pcie_link_gen_max.value_or(0), 5U);
    EXPECT_EQ(d.pcie_link_gen_gpu_max.value_or(0), 5U);
    EXPECT_EQ(d.pcie_link_width_max.value_or(0), 16U);
    EXPECT_EQ(d.inforom_image_version.value_or(""), "G520.0282.02.02");
    EXPECT_FALSE(d.display_active.value_or(true));
    EXPECT_FALSE(d.accounting_mode.value_or(true));
    EXPECT_EQ(d.serial.value_or("").size(), 13U);
    uuids.insert(d.uuid.value_or(""));
  }
  EXPECT_EQ(uuids.size(), 8U);
  EXPECT_EQ(b->device(0).pci_bus_id.value_or(""), "00000000:18:00.0");
  EXPECT_EQ(b->device(7).pci_bus_id.value_or(""), "00000000:DB:00.0");
}

TEST(NvmlBackend, EveryMetricGroupOnAThrottlingH200) {
  // GPU 5 throttles from 8 s to 22 s of each minute.
  FakeScenario env("demo", 15, kTimeStandsStill);
  auto b = open_backend();
  ASSERT_TRUE(b);
  const DeviceSample s = b->sample(5, MetricSet::all());
  EXPECT_FALSE(s.lost);
  EXPECT_GE(s.utilization_gpu_pct.value_or(0), 50U);
  EXPECT_LE(s.utilization_gpu_pct.value_or(101), 100U);
  EXPECT_TRUE(s.utilization_memory_pct.has_value());
  EXPECT_EQ(s.memory_total_bytes.value_or(0), 150754820096ULL);
  EXPECT_EQ(s.memory_reserved_bytes.value_or(0), 644939776ULL);
  EXPECT_EQ(s.memory_used_bytes.value_or(0), 126701535232ULL);
  EXPECT_EQ(s.memory_free_bytes.value_or(0) + s.memory_used_bytes.value_or(0) +
                s.memory_reserved_bytes.value_or(0),
            150754820096ULL);
  EXPECT_GE(s.temperature_gpu_c.value_or(0), 84U);  // hot and near its peak
  EXPECT_GE(s.temperature_memory_c.value_or(0), 85U);
  EXPECT_GE(s.power_draw_w.value_or(0), 540.0);
  EXPECT_LE(s.power_draw_w.value_or(999), 660.0);
  EXPECT_GE(s.power_draw_instant_w.value_or(0), 400.0);
  EXPECT_DOUBLE_EQ(s.power_limit_w.value_or(0), 700.0);
  EXPECT_GT(s.energy_mj.value_or(0), 412345678901ULL);
  EXPECT_EQ(s.sm_clock_mhz.value_or(0), 1755U);
  EXPECT_EQ(s.graphics_clock_mhz.value_or(0), 1755U);
  EXPECT_EQ(s.mem_clock_mhz.value_or(0), 3201U);
  EXPECT_EQ(s.pstate.value_or(99), 0U);
  ASSERT_FALSE(s.fan_speed_pct.has_value());  // SXM boards have no fan
  EXPECT_EQ(s.fan_speed_pct.why(), Missing::kNotSupported);
  EXPECT_EQ(s.clock_event_reasons.value_or(0), kClockEventSwThermalSlowdown);
  EXPECT_EQ(s.ecc_corrected_volatile.value_or(99), 0U);
  EXPECT_EQ(s.ecc_uncorrected_volatile.value_or(99), 0U);
  EXPECT_EQ(s.pcie_link_gen.value_or(0), 5U);
  EXPECT_EQ(s.pcie_link_width.value_or(0), 16U);
  EXPECT_EQ(s.utilization_encoder_pct.value_or(99), 0U);
  EXPECT_EQ(s.utilization_decoder_pct.value_or(99), 0U);
  EXPECT_DOUBLE_EQ(s.power_draw_average_w.value_or(0), s.power_draw_w.value_or(-1));
  EXPECT_EQ(s.pcie_replay_count.value_or(99), 0U);
  EXPECT_EQ(s.remapped_rows_correctable.value_or(99), 0U);
  EXPECT_EQ(s.remapped_rows_failure.value_or(99), 0U);
  // The cumulative NVLink counters pass 2^32 KiB: NVML's unsigned long long comes through.
  EXPECT_NEAR(static_cast<double>(s.nvlink_data_tx_kib.value_or(0)), 5000000000 + 15 * 19502314.8,
              1e3);
  EXPECT_GT(s.nvlink_data_rx_kib.value_or(0), s.nvlink_data_tx_kib.value_or(0));
  EXPECT_EQ(b->sample(3, MetricGroup::kRemappedRows).remapped_rows_correctable.value_or(0), 1U);
  const DeviceSample cool = b->sample(4, MetricGroup::kClockEvents);
  EXPECT_EQ(cool.clock_event_reasons.value_or(99), 0U);
  EXPECT_FALSE(cool.sm_clock_mhz.has_value());  // not asked for
  EXPECT_EQ(cool.sm_clock_mhz.why(), Missing::kNotAvailable);
}

TEST(NvmlBackend, EccCountersAndProcessesOfTheDemo) {
  FakeScenario env("demo", 45, kTimeStandsStill);
  auto b = open_backend();
  ASSERT_TRUE(b);
  EXPECT_EQ(b->sample(3, MetricGroup::kEcc).ecc_corrected_volatile.value_or(0), 2U);
  std::set<unsigned> pids;
  for (unsigned i = 0; i < b->device_count(); ++i) {
    const auto procs = b->processes(i);
    ASSERT_TRUE(procs.has_value());
    ASSERT_EQ(procs.value().size(), 1U);
    const GpuProcess& p = procs.value().front();
    EXPECT_EQ(p.gpu_index, i);
    EXPECT_EQ(p.name.value_or(""), "python3");
    EXPECT_EQ(p.used_memory_bytes.value_or(0), 126164336640ULL);
    EXPECT_FALSE(p.gpu_instance_id.has_value());  // not MIG
    pids.insert(p.pid);
  }
  EXPECT_EQ(pids.size(), 8U);
}

TEST(NvmlBackend, SlowStaticFactsAreReadOnlyWhenAskedAndOnce) {
  FakeScenario env("demo");
  const Hooks hooks = Hooks::get();
  hooks.reset_counts();
  auto b = open_backend();
  ASSERT_TRUE(b);
  // Opening and a plain sample leave max clocks and modes unread (3 ms each on an H200).
  b->sample(0, MetricSet(MetricGroup::kUtilization) | MetricGroup::kMemory);
  EXPECT_EQ(hooks.call_count("nvmlDeviceGetMaxClockInfo"), 0U);
  EXPECT_EQ(hooks.call_count("nvmlDeviceGetEccMode"), 0U);
  EXPECT_EQ(b->device(0).max_sm_clock_mhz.why(), Missing::kNotAvailable);
  EXPECT_EQ(b->device(0).name.value_or(""), "NVIDIA H200");  // identity is read at open
  for (int i = 0; i < 3; ++i) b->sample(0, MetricGroup::kStaticDetails);
  EXPECT_EQ(hooks.call_count("nvmlDeviceGetMaxClockInfo"), 3U);  // SM, memory, graphics: once
  EXPECT_EQ(hooks.call_count("nvmlDeviceGetEccMode"), 1U);
  EXPECT_EQ(b->device(0).max_sm_clock_mhz.value_or(0), 1980U);
  EXPECT_FALSE(b->device(1).max_sm_clock_mhz.has_value());  // per GPU
}

TEST(NvmlBackend, UnsupportedFieldsAreMissingAndNotPolledAgain) {
  FakeScenario env("unsupported");
  auto b = open_backend();
  ASSERT_TRUE(b);
  const Hooks hooks = Hooks::get();
  hooks.reset_counts();
  const DeviceSample s = b->sample(0, MetricSet::all());
  EXPECT_TRUE(s.fan_speed_pct.has_value());
  EXPECT_TRUE(s.temperature_gpu_c.has_value());
  EXPECT_FALSE(b->device(0).ecc_enabled.has_value());
  // No MIG on a GeForce: NOT_SUPPORTED, never "Disabled".
  EXPECT_EQ(b->device(0).mig_mode_current.why(), Missing::kNotSupported);
  EXPECT_EQ(b->device(0).mig_mode_pending.why(), Missing::kNotSupported);
  EXPECT_EQ(b->device(0).pcie_link_gen_max.value_or(0), 4U);
  for (Missing why :
       {s.ecc_corrected_volatile.why(), s.ecc_uncorrected_volatile.why(), s.energy_mj.why()}) {
    EXPECT_EQ(why, Missing::kNotSupported);
  }
  EXPECT_EQ(s.temperature_memory_c.why(), Missing::kNotSupported);
  EXPECT_EQ(s.power_draw_instant_w.why(), Missing::kNotSupported);
  EXPECT_EQ(s.power_draw_average_w.why(), Missing::kNotSupported);
  // No row remapping or NVLink on a GeForce: absent, not 0; the PCIe replay counter is there.
  for (MetricId m : {MetricId::kRemappedRowsCorrectable, MetricId::kRemappedRowsUncorrectable,
                     MetricId::kRemappedRowsPending, MetricId::kRemappedRowsFailure,
                     MetricId::kNvlinkDataTxKib, MetricId::kNvlinkDataRxKib}) {
    EXPECT_EQ(metric_missing(s, m), Missing::kNotSupported) << metric_info(m).name;
  }
  EXPECT_EQ(s.pcie_replay_count.value_or(99), 0U);
  ASSERT_FALSE(s.power_draw_w.has_value());
  EXPECT_EQ(s.power_draw_w.why(), Missing::kNoPermission);
  const MetricSet unsupported = b->unsupported(0);
  for (MetricGroup g : {MetricGroup::kEcc, MetricGroup::kEnergy, MetricGroup::kMemoryTemperature,
                        MetricGroup::kPowerInstant, MetricGroup::kRemappedRows,
                        MetricGroup::kNvlinkThroughput, MetricGroup::kSlowdownTime}) {
    EXPECT_TRUE(unsupported.has(g)) << static_cast<unsigned>(g);
  }
  // The same batched call brings the power-cap time, which the scenario's driver has where it
  // lacks the sync-boost time of the same group and the slowdown counters: one unsupported
  // field leaves its neighbours, in its group too.
  EXPECT_FALSE(unsupported.has(MetricGroup::kPerfPolicyTime));
  EXPECT_EQ(s.clock_event_sw_power_cap_ns.value_or(1), 0U);
  EXPECT_EQ(s.clock_event_sync_boost_ns.why(), Missing::kNotSupported);
  EXPECT_EQ(s.clock_event_hw_thermal_ns.why(), Missing::kNotSupported);
  EXPECT_FALSE(unsupported.has(MetricGroup::kPower));  // no permission is not "unsupported"

  const auto calls = [&](const char* symbol) { return hooks.call_count(symbol); };
  const auto energy = calls("nvmlDeviceGetTotalEnergyConsumption");
  const auto ecc = calls("nvmlDeviceGetTotalEccErrors");
  const auto fields = calls("nvmlDeviceGetFieldValues");
  const auto power = calls("nvmlDeviceGetPowerUsage");
  EXPECT_EQ(energy, 1U);
  EXPECT_EQ(ecc, 1U);  // the uncorrected counter was not asked once corrected said NOT_SUPPORTED
  for (int i = 0; i < 3; ++i) {
    const DeviceSample again = b->sample(0, MetricSet::all());
    EXPECT_EQ(again.energy_mj.why(), Missing::kNotSupported);
    EXPECT_EQ(again.power_draw_w.why(), Missing::kNoPermission);
    EXPECT_EQ(again.clock_event_sw_power_cap_ns.value_or(1), 0U);
    EXPECT_EQ(again.clock_event_sync_boost_ns.why(), Missing::kNotSupported);
  }
  EXPECT_EQ(calls("nvmlDeviceGetTotalEnergyConsumption"), energy);
  EXPECT_EQ(calls("nvmlDeviceGetTotalEccErrors"), ecc);
  EXPECT_EQ(calls("nvmlDeviceGetFieldValues"), fields + 3);  // for the power-cap time
  EXPECT_EQ(calls("nvmlDeviceGetPowerUsage"), power + 3);    // permission may change: asked again
  // Without the power-cap time's group, every field left is known unsupported: no call at all.
  MetricSet others;
  for (std::uint32_t bit = 1; bit != 0 && bit <= MetricSet::all().bits(); bit <<= 1) {
    if (bit != static_cast<std::uint32_t>(MetricGroup::kPerfPolicyTime))
      others |= static_cast<MetricGroup>(bit);
  }
  (void)b->sample(0, others);
  EXPECT_EQ(calls("nvmlDeviceGetFieldValues"), fields + 3);
}

// Scenario time and the backend's retry clock both move only when the test moves them.
TEST(NvmlBackend, GpuLostMidRunWhileTheOtherKeepsGoing) {
  FakeScenario env("gpu-lost", 4.9, kTimeStandsStill);  // GPU 1 is lost at 5 s
  ManualSteadyClock clock;
  auto b = testing::open_fake_backend(milliseconds(60000), clock.function());
  ASSERT_TRUE(b);
  const Hooks hooks = Hooks::get();
  EXPECT_FALSE(b->sample(1, MetricSet::cheap()).lost);
  hooks.set_time(5.1);
  const DeviceSample lost = b->sample(1, MetricSet::cheap());
  EXPECT_TRUE(lost.lost);
  for (const MetricInfo& m : metric_catalog()) {  // GPM, driver buffers and PCIe too
    if (m.id == MetricId::kLost) continue;
    EXPECT_EQ(metric_missing(lost, m.id), Missing::kGpuLost) << m.name;
  }
  EXPECT_EQ(b->processes(1).why(), Missing::kGpuLost);
  const DeviceSample alive = b->sample(0, MetricSet::cheap());
  EXPECT_FALSE(alive.lost);
  EXPECT_TRUE(alive.utilization_gpu_pct.has_value());
  // Within lost_retry, a lost GPU costs no NVML call at all.
  hooks.reset_counts();
  clock.advance(milliseconds(59999));
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(b->sample(1, MetricSet::all()).lost);
  EXPECT_EQ(b->processes(1).why(), Missing::kGpuLost);
  EXPECT_EQ(hooks.call_count("nvmlDeviceGetHandleByIndex_v2"), 0U);
  EXPECT_EQ(hooks.call_count("nvmlDeviceGetUtilizationRates"), 0U);
  EXPECT_EQ(hooks.call_count("nvmlDeviceGetComputeRunningProcesses_v3"), 0U);
}

TEST(NvmlBackend, LostGpuIsProbedOncePerRetryPeriodAndRecovers) {
  TempScenario sc(R"({"devices": [{}, {"lost_at_s": 1, "recovers_at_s": 3}]})");
  FakeScenario env(sc.path(), 0.9, kTimeStandsStill);
  ManualSteadyClock clock;
  auto b = testing::open_fake_backend(milliseconds(50), clock.function());
  ASSERT_TRUE(b);
  const Hooks hooks = Hooks::get();
  hooks.set_time(1.5);
  hooks.reset_counts();
  EXPECT_TRUE(b->sample(1, MetricSet::cheap()).lost);  // seen now: the retry period starts
  clock.advance(milliseconds(49));
  for (int i = 0; i < 20; ++i) EXPECT_TRUE(b->sample(1, MetricSet::cheap()).lost);
  EXPECT_EQ(hooks.call_count("nvmlDeviceGetHandleByIndex_v2"), 0U);  // 50 ms not yet over
  clock.advance(milliseconds(1));
  EXPECT_TRUE(b->sample(1, MetricSet::cheap()).lost);
  EXPECT_EQ(hooks.call_count("nvmlDeviceGetHandleByIndex_v2"), 1U);  // one probe, still lost
  EXPECT_TRUE(b->sample(1, MetricSet::cheap()).lost);
  EXPECT_EQ(hooks.call_count("nvmlDeviceGetHandleByIndex_v2"), 1U);  // the next period began
  hooks.set_time(3.5);
  EXPECT_TRUE(b->sample(1, MetricSet::cheap()).lost);  // back, but not probed before its time
  clock.advance(milliseconds(50));
  const DeviceSample back = b->sample(1, MetricSet::cheap());
  EXPECT_FALSE(back.lost);
  EXPECT_TRUE(back.temperature_gpu_c.has_value());
  EXPECT_TRUE(b->processes(1).has_value());
}

TEST(NvmlBackend, GpuLostAtOpenIsListedAndComesBack) {
  TempScenario sc(
      R"({"devices": [{"name": "A"}, {"name": "B", "lost_at_s": 0, "recovers_at_s": 1}]})");
  FakeScenario env(sc.path(), 0.9, kTimeStandsStill);
  auto b = open_backend(milliseconds(0));
  ASSERT_TRUE(b);
  ASSERT_EQ(b->device_count(), 2U);
  EXPECT_EQ(b->device(1).name.why(), Missing::kGpuLost);
  EXPECT_TRUE(b->sample(1, MetricGroup::kTemperature).lost);
  Hooks::get().set_time(1.1);
  EXPECT_FALSE(b->sample(1, MetricGroup::kTemperature).lost);
  EXPECT_EQ(b->device(1).name.value_or(""), "B");  // static facts read once it answered
}

TEST(NvmlBackend, OnlyLostCodesMeanALostGpu) {
  for (int code = 0; code <= NVML_ERROR_UNKNOWN; ++code) {
    const auto rc = static_cast<nvmlReturn_t>(code);
    if (rc == NVML_SUCCESS) continue;
    const bool lost = rc == NVML_ERROR_GPU_IS_LOST || rc == NVML_ERROR_RESET_REQUIRED;
    EXPECT_EQ(nvml::is_gpu_lost(rc), lost) << nvml::return_code_name(rc);
    EXPECT_EQ(missing_from(rc) == Missing::kGpuLost, lost) << nvml::return_code_name(rc);
  }
}

// Failing to open a GPU is not losing it: only nvml::is_gpu_lost codes are lost.
TEST(NvmlBackend, GpuThatCannotBeOpenedSaysWhyAndIsNotLost) {
  struct Case {
    const char* error;
    Missing why;
    const char* words;
  };
  for (const Case& c : {Case{"NO_PERMISSION", Missing::kNoPermission, "Insufficient Permissions"},
                        Case{"UNKNOWN", Missing::kError, "Unknown Error"}}) {
    SCOPED_TRACE(c.error);
    TempScenario sc(R"({"devices": [{"name": "A"}, {"name": "B", "errors": [
        {"call": "nvmlDeviceGetHandleByIndex", "error": ")" +
                    std::string(c.error) + R"("}]}]})");
    FakeScenario env(sc.path());
    auto b = open_backend();
    ASSERT_TRUE(b);
    ASSERT_EQ(b->device_count(), 2U);
    EXPECT_EQ(b->device(1).name.why(), c.why);
    EXPECT_EQ(b->device(1).open_error.value_or(""), c.words);
    EXPECT_FALSE(b->device(0).open_error.has_value());
    const Hooks hooks = Hooks::get();
    hooks.reset_counts();
    for (int i = 0; i < 3; ++i) {
      const DeviceSample s = b->sample(1, MetricSet::all());
      EXPECT_FALSE(s.lost);
      for (const MetricInfo& m : metric_catalog()) {
        if (m.id == MetricId::kLost) continue;
        EXPECT_EQ(metric_missing(s, m.id), c.why) << m.name;
      }
    }
    EXPECT_EQ(b->processes(1).why(), c.why);
    EXPECT_EQ(b->read_driver_samples(1, DriverBuffer::kPower).why(), c.why);
    EXPECT_EQ(b->pcie_throughput(1).tx_bytes_per_s.why(), c.why);
    EXPECT_FALSE(b->gpm_supported(1));
    // Probed like a lost GPU: not again within lost_retry.
    EXPECT_EQ(hooks.call_count("nvmlDeviceGetHandleByIndex_v2"), 0U);
    EXPECT_TRUE(b->sample(0, MetricSet::cheap()).temperature_gpu_c.has_value());
  }
}

TEST(NvmlBackend, GpuThatCouldNotBeOpenedOpensOnceItMay) {
  TempScenario sc(R"({"devices": [{"name": "A"}, {"name": "B", "errors": [
      {"call": "nvmlDeviceGetHandleByIndex", "error": "NO_PERMISSION", "until_s": 1}]}]})");
  FakeScenario env(sc.path(), 0.9, 1);
  auto b = open_backend(milliseconds(0));
  ASSERT_TRUE(b);
  EXPECT_TRUE(b->device(1).open_error.has_value());
  std::this_thread::sleep_for(milliseconds(150));
  const DeviceSample s = b->sample(1, MetricGroup::kTemperature);
  EXPECT_FALSE(s.lost);
  EXPECT_TRUE(s.temperature_gpu_c.has_value());
  EXPECT_EQ(b->device(1).name.value_or(""), "B");
  EXPECT_FALSE(b->device(1).open_error.has_value());
}

TEST(NvmlBackend, ProcessListThatGrowsBetweenSizingAndRead) {
  FakeScenario env("process-race");
  auto b = open_backend();
  ASSERT_TRUE(b);
  const Hooks hooks = Hooks::get();
  hooks.reset_counts();
  const auto procs = b->processes(0);
  ASSERT_TRUE(procs.has_value()) << static_cast<int>(procs.why());
  EXPECT_EQ(procs.value().size(), 22U);  // 1 at sizing, 21 at the first read, 22 at the retry
  EXPECT_EQ(hooks.call_count("nvmlDeviceGetComputeRunningProcesses_v3"), 3U);
  std::set<unsigned> pids;
  for (const GpuProcess& p : procs.value()) pids.insert(p.pid);
  EXPECT_EQ(pids.size(), 22U);
  EXPECT_EQ(procs.value().back().name.value_or(""), "python3");
}

TEST(NvmlBackend, MemoryFallsBackToV1WhenV2RejectsTheStruct) {
  TempScenario sc(
      R"({"devices": [{"memory_reserved_bytes": 1000, "fields": {"memory_used_bytes": 5000},
      "errors": [{"call": "nvmlDeviceGetMemoryInfo_v2", "error": "ARGUMENT_VERSION_MISMATCH"}]}]})");
  FakeScenario env(sc.path());
  auto b = open_backend();
  ASSERT_TRUE(b);
  const Hooks hooks = Hooks::get();
  hooks.reset_counts();
  const DeviceSample s = b->sample(0, MetricGroup::kMemory);
  EXPECT_EQ(s.memory_used_bytes.value_or(0), 6000U);  // v1 counts the reserve as used
  EXPECT_EQ(s.memory_reserved_bytes.why(), Missing::kNotSupported);
  EXPECT_EQ(s.memory_free_bytes.value_or(0), 150754820096ULL - 6000);
  EXPECT_EQ(hooks.call_count("nvmlDeviceGetMemoryInfo_v2"), 0U);  // found broken at open
  EXPECT_EQ(hooks.call_count("nvmlDeviceGetMemoryInfo"), 1U);
}

TEST(NvmlBackend, TransientErrorsAreNotRememberedAsUnsupported) {
  TempScenario sc(
      R"({"devices": [{"errors": [{"call": "nvmlDeviceGetTemperature", "error": "UNKNOWN",
                                                "every_nth_call": 2}]}]})");
  FakeScenario env(sc.path());
  auto b = open_backend();
  ASSERT_TRUE(b);
  EXPECT_TRUE(b->sample(0, MetricGroup::kTemperature).temperature_gpu_c.has_value());
  EXPECT_EQ(b->sample(0, MetricGroup::kTemperature).temperature_gpu_c.why(), Missing::kError);
  EXPECT_TRUE(b->sample(0, MetricGroup::kTemperature).temperature_gpu_c.has_value());
  EXPECT_FALSE(b->unsupported(0).has(MetricGroup::kTemperature));
}

TEST(NvmlBackend, ManyGpus) {
  FakeScenario env("many-gpus-256");
  auto b = open_backend();
  ASSERT_TRUE(b);
  ASSERT_EQ(b->device_count(), 256U);
  EXPECT_EQ(b->device(255).pci_bus_id.value_or(""), "000000FF:18:00.0");
  EXPECT_TRUE(b->sample(255, MetricSet::cheap()).utilization_gpu_pct.has_value());
}

}  // namespace

// XID 94 at 8 s hits a row: from then on it is remapped, pending the next reset.
TEST(NvmlBackend, RemappedRowsFollowTheScenario) {
  FakeScenario env("xid", 10, kTimeStandsStill);
  auto b = open_backend();
  ASSERT_TRUE(b);
  const DeviceSample s = b->sample(1, MetricGroup::kRemappedRows);
  EXPECT_EQ(s.remapped_rows_uncorrectable.value_or(0), 1U);
  EXPECT_EQ(s.remapped_rows_pending.value_or(0), 1U);
  EXPECT_EQ(s.remapped_rows_correctable.value_or(99), 0U);
  EXPECT_EQ(b->sample(0, MetricGroup::kRemappedRows).remapped_rows_uncorrectable.value_or(99), 0U);
}

}  // namespace gpumon
