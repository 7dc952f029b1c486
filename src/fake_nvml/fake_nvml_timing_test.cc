// SPDX-License-Identifier: MIT
// Time in the fake library: scenario clock (offset, scale, held and moved by the test), energy,
// events, latencies, lost GPUs, error rules, and what happens to a broken scenario.
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "fake_nvml/fake_nvml_fixture.h"

namespace gpumon::fake::testing {
namespace {

using FakeNvmlTime = FakeNvmlTest;
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

TEST_F(FakeNvmlTime, OffsetJumpsToALaterScenarioTime) {
  open("demo", 15, kTimeStandsStill);
  unsigned long long reasons = 0;
  ASSERT_EQ(fn().device_get_current_clocks_event_reasons(device(5), &reasons), NVML_SUCCESS);
  EXPECT_EQ(reasons, nvml::kClocksEventSwThermalSlowdown);  // GPU 5 throttles around t=15 s
  unsigned sm = 0;
  ASSERT_EQ(fn().device_get_clock_info(device(5), NVML_CLOCK_SM, &sm), NVML_SUCCESS);
  EXPECT_EQ(sm, 1755U);
  ASSERT_EQ(fn().device_get_current_clocks_event_reasons(device(4), &reasons), NVML_SUCCESS);
  EXPECT_EQ(reasons, 0U);
}

TEST_F(FakeNvmlTime, EnergyIsTheIntegralOfPower) {
  open("idle-h200", 0, kTimeStandsStill);  // 81.2 W
  const nvmlDevice_t h = device(0);
  unsigned long long e0 = 0, e1 = 0;
  ASSERT_EQ(fn().device_get_total_energy_consumption(h, &e0), NVML_SUCCESS);
  hooks_.set_time(10);
  ASSERT_EQ(fn().device_get_total_energy_consumption(h, &e1), NVML_SUCCESS);
  EXPECT_GE(e0, 98765432100ULL);  // starts at energy_at_start_mj
  // 81.2 W for 10 s, in mJ; the scenario's noise is at most 0.3 W.
  EXPECT_NEAR(static_cast<double>(e1 - e0), 81200 * 10, 300 * 10);
}

TEST_F(FakeNvmlTime, XidEventsArriveOnceEachAndWaitsHonourTheTimeout) {
  open("xid", 7.85, kTimeStandsStill);  // XID 13 (3 s) and 31 (6 s) are due; 94 on GPU 1 at 8 s
  nvmlEventSet_t set = nullptr;
  ASSERT_EQ(fn().event_set_create(&set), NVML_SUCCESS);
  EXPECT_EQ(fn().device_register_events(device(0), nvml::kEventTypeXidCriticalError | 0x4, set),
            NVML_ERROR_NOT_SUPPORTED);
  ASSERT_EQ(fn().device_register_events(device(0), nvml::kEventTypeXidCriticalError, set),
            NVML_SUCCESS);
  ASSERT_EQ(fn().device_register_events(device(1), nvml::kEventTypeXidCriticalError, set),
            NVML_SUCCESS);
  nvmlEventData_t data{};
  ASSERT_EQ(fn().event_set_wait(set, &data, 0), NVML_SUCCESS);
  EXPECT_EQ(data.eventType, nvml::kEventTypeXidCriticalError);
  EXPECT_EQ(data.eventData, 13U);
  EXPECT_EQ(data.device, device(0));
  ASSERT_EQ(fn().event_set_wait(set, &data, 0), NVML_SUCCESS);
  EXPECT_EQ(data.eventData, 31U);
  EXPECT_EQ(fn().event_set_wait(set, &data, 0), NVML_ERROR_TIMEOUT);
  // A wait that scenario time catches up with (moved by another thread) gets the event.
  std::thread mover([&] { hooks_.set_time(8.05); });
  ASSERT_EQ(fn().event_set_wait(set, &data, 600000), NVML_SUCCESS);
  mover.join();
  EXPECT_EQ(data.eventData, 94U);
  EXPECT_EQ(data.device, device(1));
  const auto t0 = Clock::now();
  EXPECT_EQ(fn().event_set_wait(set, &data, 60), NVML_ERROR_TIMEOUT);  // next is at 12 s
  EXPECT_GE(ms_since(t0), 55);
  ASSERT_EQ(fn().event_set_free(set), NVML_SUCCESS);
  EXPECT_EQ(fn().event_set_wait(set, &data, 0), NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(fn().event_set_free(set), NVML_ERROR_INVALID_ARGUMENT);
}

TEST_F(FakeNvmlTime, AWaitSleepsUntilTheNextEventFallsDue) {
  open("xid", 7.9);  // real time: XID 94 on GPU 1 falls due 0.1 s from now
  nvmlEventSet_t set = nullptr;
  ASSERT_EQ(fn().event_set_create(&set), NVML_SUCCESS);
  ASSERT_EQ(fn().device_register_events(device(1), nvml::kEventTypeXidCriticalError, set),
            NVML_SUCCESS);
  // Ten minutes: a wait that slept out its timeout instead of until the event was due would
  // outlast the test's time limit.
  nvmlEventData_t data{};
  ASSERT_EQ(fn().event_set_wait(set, &data, 600000), NVML_SUCCESS);
  EXPECT_EQ(data.eventData, 94U);
  ASSERT_EQ(fn().event_set_free(set), NVML_SUCCESS);
}

// In a child process the temperature getter sleeps a minute (the longest latency a scenario
// may give); the power getter on another thread must return while it does. A latency applied
// under the library's lock would hold the power getter until the sleep ended.
TEST_F(FakeNvmlTime, LatenciesBusyWaitOrSleepOutsideTheLock) {
  TempScenario sc(R"({"latency_us": {"nvmlDeviceGetTotalEnergyConsumption": 2400},
                      "devices": [{"latency_us": {"nvmlDeviceGetTemperature": {"us": 60000000, "mode": "sleep"}}}]})");
  open(sc.path());
  const nvmlDevice_t h = device(0);
  unsigned long long energy = 0;
  const auto t0 = Clock::now();
  ASSERT_EQ(fn().device_get_total_energy_consumption(h, &energy), NVML_SUCCESS);
  EXPECT_GE(ms_since(t0), 2.4);
  hooks_.reset_counts();
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::atomic<bool> hang_returned{false};
    std::thread hang([&] {
      unsigned temp = 0;
      (void)fn().device_get_temperature(h, NVML_TEMPERATURE_GPU, &temp);
      hang_returned = true;
    });
    hang.detach();  // _exit() ends it
    while (hooks_.call_count("nvmlDeviceGetTemperature") == 0) std::this_thread::yield();
    unsigned power = 0;
    const bool ok = fn().device_get_power_usage(h, &power) == NVML_SUCCESS && !hang_returned;
    ::_exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
}

TEST_F(FakeNvmlTime, ErrorRulesByCallFieldWindowAndEveryNth) {
  TempScenario sc(R"({"devices": [{"errors": [
      {"call": "nvmlDeviceGetTemperature", "error": "UNKNOWN", "every_nth_call": 3},
      {"field": "fan_speed_pct", "error": "NO_PERMISSION", "from_s": 100},
      {"field": "power_draw_mw", "error": "TIMEOUT", "until_s": 100}]}]})");
  open(sc.path());
  const nvmlDevice_t h = device(0);
  unsigned v = 0;
  std::vector<nvmlReturn_t> got;
  for (int i = 0; i < 6; ++i)
    got.push_back(fn().device_get_temperature(h, NVML_TEMPERATURE_GPU, &v));
  EXPECT_EQ(got, (std::vector<nvmlReturn_t>{NVML_SUCCESS, NVML_SUCCESS, NVML_ERROR_UNKNOWN,
                                            NVML_SUCCESS, NVML_SUCCESS, NVML_ERROR_UNKNOWN}));
  EXPECT_EQ(fn().device_get_fan_speed(h, &v), NVML_SUCCESS);  // before its window
  EXPECT_EQ(fn().device_get_power_usage(h, &v), NVML_ERROR_TIMEOUT);
}

TEST_F(FakeNvmlTime, LostGpuAnswersGpuIsLostUntilItRecovers) {
  TempScenario sc(R"({"devices": [{}, {"lost_at_s": 1, "recovers_at_s": 2}]})");
  nvmlDevice_t gpu1 = nullptr;  // handles stay valid across nvmlShutdown and nvmlInit
  for (const auto& [offset, expected] :
       {std::pair{0.5, NVML_SUCCESS}, {1.5, NVML_ERROR_GPU_IS_LOST}, {2.5, NVML_SUCCESS}}) {
    open(sc.path(), offset);
    nvmlDevice_t h = nullptr;
    EXPECT_EQ(fn().device_get_handle_by_index(1, &h), expected) << "t=" << offset;
    if (gpu1 == nullptr) gpu1 = h;
    EXPECT_EQ(fn().device_get_handle_by_index(0, &h), NVML_SUCCESS);
    unsigned v = 0;
    EXPECT_EQ(fn().device_get_power_usage(gpu1, &v), expected) << "t=" << offset;
    EXPECT_EQ(fn().device_get_power_usage(h, &v), NVML_SUCCESS);
    TearDown();
  }
}

TEST_F(FakeNvmlTime, InitErrorsAndLatencyComeFromTheScenario) {
  load("init-rm-mismatch");
  auto t0 = Clock::now();
  EXPECT_EQ(fn().init(), NVML_ERROR_LIB_RM_VERSION_MISMATCH);
  EXPECT_GE(ms_since(t0), 3);
  unsigned count = 0;
  EXPECT_EQ(fn().device_get_count(&count), NVML_ERROR_UNINITIALIZED);
}

TEST_F(FakeNvmlTime, BrokenScenarioFailsInitAndIsReportedOnce) {
  TempScenario sc(
      R"({"devices": [{"fields": {"power_draw_mw": {"ramp": {"from": 1, "to": 2, "duration_s": -1}}}}]})");
  load(sc.path());
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(fn().init(), NVML_ERROR_UNKNOWN);
  EXPECT_EQ(fn().init(), NVML_ERROR_UNKNOWN);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(err, "gpumon fake NVML: " + sc.path() +
                     ": devices[0].fields.power_draw_mw.ramp.duration_s: must be > 0\n");
  env_->env().set("GPUMON_FAKE_TIME_SCALE", "fast");
  env_->env().set("GPUMON_FAKE_SCENARIO", "demo");
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(fn().init(), NVML_ERROR_UNKNOWN);
  EXPECT_NE(::testing::internal::GetCapturedStderr().find("GPUMON_FAKE_TIME_SCALE=\"fast\""),
            std::string::npos);
  env_->env().set("GPUMON_FAKE_TIME_SCALE", "1");
  env_->env().set("GPUMON_FAKE_SCENARIO", "no-such-scenario");
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(fn().init(), NVML_ERROR_UNKNOWN);
  EXPECT_NE(
      ::testing::internal::GetCapturedStderr().find("scenario \"no-such-scenario\" not found"),
      std::string::npos);
}

}  // namespace
}  // namespace gpumon::fake::testing
