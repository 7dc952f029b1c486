// SPDX-License-Identifier: MIT
// NVML semantics of the fake library: init state, argument checks, buffer sizes, struct
// versions, field values, process lists and sample buffers.
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "fake_nvml/fake_nvml_fixture.h"
#include "util/testing/temp_dir.h"

namespace gpumon::fake::testing {
namespace {

using FakeNvml = FakeNvmlTest;

TEST_F(FakeNvml, CallsBeforeInitAndAfterTheLastShutdownAreUninitialized) {
  load("demo");
  unsigned count = 0;
  EXPECT_EQ(fn().device_get_count(&count), NVML_ERROR_UNINITIALIZED);
  EXPECT_EQ(fn().shutdown(), NVML_ERROR_UNINITIALIZED);
  ASSERT_EQ(fn().init(), NVML_SUCCESS);
  ASSERT_EQ(fn().init(), NVML_SUCCESS);
  EXPECT_EQ(fn().shutdown(), NVML_SUCCESS);
  EXPECT_EQ(fn().device_get_count(&count), NVML_SUCCESS);  // one init still open
  EXPECT_EQ(count, 8U);
  const nvmlDevice_t h = device(0);
  EXPECT_EQ(fn().shutdown(), NVML_SUCCESS);
  unsigned temp = 0;
  EXPECT_EQ(fn().device_get_temperature(h, NVML_TEMPERATURE_GPU, &temp), NVML_ERROR_UNINITIALIZED);
  EXPECT_EQ(fn().shutdown(), NVML_ERROR_UNINITIALIZED);
}

TEST_F(FakeNvml, NullAndBogusArgumentsAreInvalidNotCrashes) {
  open("demo");
  const nvmlDevice_t h = device(0);
  EXPECT_EQ(fn().device_get_count(nullptr), NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(fn().device_get_handle_by_index(0, nullptr), NVML_ERROR_INVALID_ARGUMENT);
  nvmlDevice_t out = nullptr;
  EXPECT_EQ(fn().device_get_handle_by_index(8, &out), NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(fn().device_get_handle_by_uuid(nullptr, &out), NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(fn().device_get_name(h, nullptr, 96), NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(fn().device_get_pci_info(h, nullptr), NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(fn().device_get_memory_info_v2(h, nullptr), NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(fn().device_get_memory_info(h, nullptr), NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(fn().device_get_utilization_rates(h, nullptr), NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(fn().device_get_power_usage(h, nullptr), NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(fn().device_get_performance_state(h, nullptr), NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(fn().device_get_ecc_mode(h, nullptr, nullptr), NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(fn().device_get_field_values(h, 1, nullptr), NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(fn().device_get_compute_running_processes(h, nullptr, nullptr),
            NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(fn().system_get_driver_version(nullptr, 80), NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(fn().event_set_create(nullptr), NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(fn().event_set_wait(nullptr, nullptr, 0), NVML_ERROR_INVALID_ARGUMENT);
  unsigned v = 0;
  EXPECT_EQ(fn().device_get_temperature(nullptr, NVML_TEMPERATURE_GPU, &v),
            NVML_ERROR_INVALID_ARGUMENT);
  int junk = 0;
  EXPECT_EQ(fn().device_get_fan_speed(reinterpret_cast<nvmlDevice_t>(&junk), &v),
            NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(fn().device_get_temperature(h, static_cast<nvmlTemperatureSensors_t>(7), &v),
            NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(fn().device_get_clock_info(h, static_cast<nvmlClockType_t>(9), &v),
            NVML_ERROR_INVALID_ARGUMENT);
}

TEST_F(FakeNvml, StringsNeedRoomForTheirTerminator) {
  open("demo");
  const nvmlDevice_t h = device(0);
  char buf[96] = {};
  const unsigned len = std::strlen("NVIDIA H200");
  EXPECT_EQ(fn().device_get_name(h, buf, len), NVML_ERROR_INSUFFICIENT_SIZE);
  ASSERT_EQ(fn().device_get_name(h, buf, len + 1), NVML_SUCCESS);
  EXPECT_STREQ(buf, "NVIDIA H200");
  ASSERT_EQ(fn().system_get_driver_version(buf, sizeof buf), NVML_SUCCESS);
  EXPECT_STREQ(buf, "580.159.04");
  EXPECT_EQ(fn().system_get_driver_version(buf, 3), NVML_ERROR_INSUFFICIENT_SIZE);
  ASSERT_EQ(fn().system_get_process_name(48215, buf, sizeof buf), NVML_SUCCESS);
  EXPECT_STREQ(buf, "python3");
  EXPECT_EQ(fn().system_get_process_name(48215, buf, 4), NVML_ERROR_INSUFFICIENT_SIZE);
  EXPECT_EQ(fn().system_get_process_name(1, buf, sizeof buf), NVML_ERROR_NOT_FOUND);
  int cuda = 0;
  ASSERT_EQ(fn().system_get_cuda_driver_version(&cuda), NVML_SUCCESS);
  EXPECT_EQ(cuda, 13000);
}

TEST_F(FakeNvml, HandlesByUuidAndBusIdAndIndex) {
  open("demo");
  nvmlDevice_t h = nullptr;
  ASSERT_EQ(fn().device_get_handle_by_pci_bus_id("0000:AB:00.0", &h), NVML_SUCCESS);
  unsigned index = 0;
  ASSERT_EQ(fn().device_get_index(h, &index), NVML_SUCCESS);
  EXPECT_EQ(index, 5U);
  char uuid[80] = {};
  ASSERT_EQ(fn().device_get_uuid(h, uuid, sizeof uuid), NVML_SUCCESS);
  nvmlDevice_t by_uuid = nullptr;
  ASSERT_EQ(fn().device_get_handle_by_uuid(uuid, &by_uuid), NVML_SUCCESS);
  EXPECT_EQ(by_uuid, h);
  EXPECT_EQ(fn().device_get_handle_by_uuid("GPU-nope", &by_uuid), NVML_ERROR_NOT_FOUND);
  nvmlPciInfo_t pci{};
  ASSERT_EQ(fn().device_get_pci_info(h, &pci), NVML_SUCCESS);
  EXPECT_STREQ(pci.busId, "00000000:AB:00.0");
  EXPECT_STREQ(pci.busIdLegacy, "0000:AB:00.0");
  EXPECT_EQ(pci.bus, 0xABU);
  EXPECT_EQ(pci.pciDeviceId, 0x233510DEU);
}

TEST_F(FakeNvml, MemoryV2ChecksTheStructVersionAndAddsUp) {
  open("demo");
  const nvmlDevice_t h = device(1);
  nvmlMemory_v2_t m{};
  m.version = 1;
  EXPECT_EQ(fn().device_get_memory_info_v2(h, &m), NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
  m.version = nvml::kStructVersion(sizeof(nvmlMemory_v2_t), 1);
  EXPECT_EQ(fn().device_get_memory_info_v2(h, &m), NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
  m.version = nvml::kMemoryV2Version;
  ASSERT_EQ(fn().device_get_memory_info_v2(h, &m), NVML_SUCCESS);
  EXPECT_EQ(m.total, 150754820096ULL);
  EXPECT_EQ(m.reserved, 644939776ULL);
  EXPECT_EQ(m.used, 126701535232ULL);
  EXPECT_EQ(m.free, m.total - m.reserved - m.used);
  nvmlMemory_t v1{};
  ASSERT_EQ(fn().device_get_memory_info(h, &v1), NVML_SUCCESS);
  EXPECT_EQ(v1.total, m.total);
  EXPECT_EQ(v1.used, m.used + m.reserved);  // v1 counts the reserve as used
  EXPECT_EQ(v1.free, m.free);
}

TEST_F(FakeNvml, FieldValuesAnswerPerField) {
  open("demo");
  nvmlFieldValue_t values[3] = {};
  values[0].fieldId = nvml::kFiDevMemoryTemp;
  values[1].fieldId = nvml::kFiDevPowerInstant;
  values[2].fieldId = 999;
  ASSERT_EQ(fn().device_get_field_values(device(0), 3, values), NVML_SUCCESS);
  EXPECT_EQ(values[0].nvmlReturn, NVML_SUCCESS);
  EXPECT_EQ(values[0].valueType, NVML_VALUE_TYPE_UNSIGNED_INT);
  EXPECT_GE(values[0].value.uiVal, 60U);
  EXPECT_LE(values[0].value.uiVal, 75U);
  EXPECT_EQ(values[1].nvmlReturn, NVML_SUCCESS);
  EXPECT_GE(values[1].value.uiVal, 400000U);  // mW
  EXPECT_LE(values[1].value.uiVal, 700000U);
  EXPECT_GT(values[1].timestamp, 1600000000000000LL);  // us since 1970
  EXPECT_EQ(values[2].nvmlReturn, NVML_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(fn().device_get_field_values(device(0), 0, values), NVML_ERROR_INVALID_ARGUMENT);
}

TEST_F(FakeNvml, ProcessListSizingAndLayouts) {
  open("demo");
  const nvmlDevice_t h = device(2);
  unsigned count = 0;
  ASSERT_EQ(fn().device_get_compute_running_processes(h, &count, nullptr),
            NVML_ERROR_INSUFFICIENT_SIZE);
  EXPECT_EQ(count, 1U);
  count = 1;
  EXPECT_EQ(fn().device_get_compute_running_processes(h, &count, nullptr),
            NVML_ERROR_INVALID_ARGUMENT);
  // The loader resolved _v3 and, with RunningProcessDetailList present, reads the 24-byte layout.
  EXPECT_EQ(lib_->process_info_layout(), nvml::ProcessInfoLayout::kV2);
  std::vector<nvmlProcessInfo_v2_t> v2(4);
  count = 4;
  ASSERT_EQ(fn().device_get_compute_running_processes(h, &count, v2.data()), NVML_SUCCESS);
  ASSERT_EQ(count, 1U);
  EXPECT_EQ(v2[0].pid, 48212U);
  EXPECT_EQ(v2[0].usedGpuMemory, 126164336640ULL);
  EXPECT_EQ(v2[0].gpuInstanceId, nvml::kNoMigInstance);
  // The plain (v1) entry point writes 16-byte entries.
  using V1Fn = nvmlReturn_t (*)(nvmlDevice_t, unsigned*, nvmlProcessInfo_v1_t*);
  auto v1_fn = reinterpret_cast<V1Fn>(
      dlsym(dlopen(kFakeLibrary, RTLD_NOW), "nvmlDeviceGetComputeRunningProcesses"));
  ASSERT_NE(v1_fn, nullptr);
  std::vector<nvmlProcessInfo_v1_t> v1(2);
  count = 2;
  ASSERT_EQ(v1_fn(h, &count, v1.data()), NVML_SUCCESS);
  EXPECT_EQ(v1[0].pid, 48212U);
  EXPECT_EQ(v1[1].pid, 0U);  // untouched
}

TEST_F(FakeNvml, NoProcessesIsSuccessWithZero) {
  open("idle-h200");
  unsigned count = 0;
  EXPECT_EQ(fn().device_get_compute_running_processes(device(0), &count, nullptr), NVML_SUCCESS);
  EXPECT_EQ(count, 0U);
}

TEST_F(FakeNvml, SampleBuffersFollowTheDriverGridAndLastSeen) {
  open("demo", 30, kTimeStandsStill);
  const nvmlDevice_t h = device(0);
  nvmlValueType_t type{};
  unsigned count = 0;
  ASSERT_EQ(fn().device_get_samples(h, NVML_TOTAL_POWER_SAMPLES, 0, &type, &count, nullptr),
            NVML_SUCCESS);
  EXPECT_EQ(count, 120U);
  std::vector<nvmlSample_t> s(count);
  ASSERT_EQ(fn().device_get_samples(h, NVML_TOTAL_POWER_SAMPLES, 0, &type, &count, s.data()),
            NVML_SUCCESS);
  EXPECT_EQ(type, NVML_VALUE_TYPE_UNSIGNED_INT);
  ASSERT_EQ(count, 120U);  // a full 2.4 s buffer at t=30 s
  bool saw_dip = false;
  for (unsigned i = 1; i < count; ++i) {
    EXPECT_NEAR(static_cast<double>(s[i].timeStamp - s[i - 1].timeStamp), 20000, 2);
    saw_dip = saw_dip || s[i].sampleValue.uiVal < 520000;
  }
  EXPECT_TRUE(saw_dip) << "20 ms power samples should catch the step-boundary dips";
  // Only samples newer than lastSeen; none newer is NOT_FOUND.
  const unsigned long long last_seen = s[100].timeStamp;
  count = 120;
  ASSERT_EQ(
      fn().device_get_samples(h, NVML_TOTAL_POWER_SAMPLES, last_seen, &type, &count, s.data()),
      NVML_SUCCESS);
  EXPECT_GE(count, 19U);
  EXPECT_GT(s[0].timeStamp, last_seen);
  count = 120;
  EXPECT_EQ(fn().device_get_samples(h, NVML_TOTAL_POWER_SAMPLES, ~0ULL, &type, &count, s.data()),
            NVML_ERROR_NOT_FOUND);
  // Utilization: every 200 ms, about 14 s kept.
  count = 120;
  ASSERT_EQ(fn().device_get_samples(h, NVML_GPU_UTILIZATION_SAMPLES, 0, &type, &count, s.data()),
            NVML_SUCCESS);
  EXPECT_EQ(count, 70U);
  EXPECT_NEAR(static_cast<double>(s[1].timeStamp - s[0].timeStamp), 200000, 2);
  count = 120;
  EXPECT_EQ(fn().device_get_samples(h, NVML_ENC_UTILIZATION_SAMPLES, 0, &type, &count, s.data()),
            NVML_SUCCESS);
  EXPECT_EQ(count, 70U);
  constexpr auto kModulePowerSamples = static_cast<nvmlSamplingType_t>(7);  // not modelled
  EXPECT_EQ(fn().device_get_samples(h, kModulePowerSamples, 0, &type, &count, s.data()),
            NVML_ERROR_NOT_SUPPORTED);
}

TEST_F(FakeNvml, CallCountsCountEachSymbolAndReset) {
  open("demo");
  const nvmlDevice_t h = device(0);
  hooks_.reset_counts();
  unsigned v = 0;
  for (int i = 0; i < 3; ++i) fn().device_get_power_usage(h, &v);
  EXPECT_EQ(hooks_.call_count("nvmlDeviceGetPowerUsage"), 3U);
  EXPECT_EQ(hooks_.call_count("nvmlDeviceGetFanSpeed"), 0U);
  EXPECT_EQ(hooks_.call_count("nvmlNoSuchThing"), 0U);
  EXPECT_EQ(hooks_.call_count(nullptr), 0U);
  hooks_.reset_counts();
  EXPECT_EQ(hooks_.call_count("nvmlDeviceGetPowerUsage"), 0U);
}

TEST_F(FakeNvml, ScenarioNameIsKnownBeforeInit) {
  load("gpu-lost");
  EXPECT_STREQ(hooks_.scenario_name(), "gpu-lost");
  EXPECT_EQ(lib_->simulated_scenario(), "gpu-lost");
  TempScenario named(R"({"name": "my-rig", "devices": [{}]})");
  env_->env().set("GPUMON_FAKE_SCENARIO", named.path());
  EXPECT_STREQ(hooks_.scenario_name(), "my-rig");
}

// Bare names resolve beside the library that was loaded, not in a path compiled into the build:
// a copied (or moved) build finds its own scenarios.
TEST_F(FakeNvml, BareNamesResolveBesideTheLoadedLibrary) {
  load("demo");
  env_->env().unset("GPUMON_SCENARIO_DIR");
  EXPECT_STREQ(hooks_.scenario_name(), "demo");  // the shipped copy in <build>/fake-nvml

  gpumon::testing_util::TempDir moved;
  const std::filesystem::path lib = moved.file("libnvidia-ml.so.1");
  std::filesystem::copy_file(kFakeLibrary, lib);
  std::filesystem::create_directory(moved.file("scenarios"));
  std::ofstream(moved.file("scenarios/demo.json")) << R"({"name": "moved-demo", "devices": [{}]})";
  void* copy = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(copy, nullptr) << dlerror();
  const auto name = reinterpret_cast<const char* (*)()>(dlsym(copy, "gpumonFakeScenarioName"));
  ASSERT_NE(name, nullptr);
  EXPECT_STREQ(name(), "moved-demo");
  // Left loaded: unloading it would strand its runtime's allocations (a leak to LeakSanitizer).
}

}  // namespace
}  // namespace gpumon::fake::testing
