// SPDX-License-Identifier: MIT
// The fake library's GPM, process-utilization, PCIe and ECC-event exports at the C ABI.
#include "fake_nvml/fake_nvml_fixture.h"

namespace gpumon::fake::testing {
namespace {

using FakeNvmlPerf = FakeNvmlTest;

TEST_F(FakeNvmlPerf, GpmChecksVersionsSamplesAndNamesItsMetrics) {
  TempScenario sc(R"({"devices": [{"name": "NVIDIA H200", "fields": {"sm_active_pct": 66}},
                                  {"name": "NVIDIA H200"}]})");
  open(sc.path());
  nvmlGpmSupport_t support{};
  EXPECT_EQ(fn().gpm_query_device_support(device(0), &support),
            NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
  support.version = nvml::kGpmSupportVersion;
  ASSERT_EQ(fn().gpm_query_device_support(device(0), &support), NVML_SUCCESS);
  EXPECT_EQ(support.isSupportedDevice, 1U);
  nvmlGpmSample_t a = nullptr, b = nullptr, other = nullptr;
  ASSERT_EQ(fn().gpm_sample_alloc(&a), NVML_SUCCESS);
  ASSERT_EQ(fn().gpm_sample_alloc(&b), NVML_SUCCESS);
  ASSERT_EQ(fn().gpm_sample_alloc(&other), NVML_SUCCESS);
  nvmlGpmMetricsGet_t get{};
  get.version = nvml::kGpmMetricsGetVersion;
  get.numMetrics = 2;
  get.sample1 = a;
  get.sample2 = b;
  get.metrics[0].metricId = NVML_GPM_METRIC_SM_UTIL;
  get.metrics[1].metricId = 77;  // an NVLink metric: not modelled
  EXPECT_EQ(fn().gpm_metrics_get(&get), NVML_ERROR_INVALID_ARGUMENT);  // samples not taken yet
  ASSERT_EQ(fn().gpm_sample_get(device(0), a), NVML_SUCCESS);
  ASSERT_EQ(fn().gpm_sample_get(device(0), b), NVML_SUCCESS);
  ASSERT_EQ(fn().gpm_sample_get(device(1), other), NVML_SUCCESS);
  ASSERT_EQ(fn().gpm_metrics_get(&get), NVML_SUCCESS);
  EXPECT_EQ(get.metrics[0].nvmlReturn, NVML_SUCCESS);
  EXPECT_DOUBLE_EQ(get.metrics[0].value, 66.0);
  ASSERT_NE(get.metrics[0].metricInfo.shortName, nullptr);
  EXPECT_STREQ(get.metrics[0].metricInfo.unit, "%");
  EXPECT_EQ(get.metrics[1].nvmlReturn, NVML_ERROR_NOT_SUPPORTED);
  get.sample2 = other;  // two devices
  EXPECT_EQ(fn().gpm_metrics_get(&get), NVML_ERROR_INVALID_ARGUMENT);
  get.sample2 = b;
  get.version = 2;
  EXPECT_EQ(fn().gpm_metrics_get(&get), NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
  for (nvmlGpmSample_t s : {a, b, other}) EXPECT_EQ(fn().gpm_sample_free(s), NVML_SUCCESS);
  EXPECT_EQ(fn().gpm_sample_free(a), NVML_ERROR_INVALID_ARGUMENT);
}

TEST_F(FakeNvmlPerf, ProcessUtilizationSizingAndLastSeen) {
  TempScenario sc(R"({"devices": [{"processes": [
      {"pid": 7, "name": "a", "sm_util_pct": 50}, {"pid": 8, "name": "b", "mem_util_pct": 20}]},
      {"unsupported": ["process_utilization"]}]})");
  open(sc.path(), 1);
  unsigned count = 0;
  EXPECT_EQ(fn().device_get_process_utilization(device(0), nullptr, &count, 0),
            NVML_ERROR_INSUFFICIENT_SIZE);
  EXPECT_EQ(count, 2U);
  nvmlProcessUtilizationSample_t buf[2] = {};
  ASSERT_EQ(fn().device_get_process_utilization(device(0), buf, &count, 0), NVML_SUCCESS);
  EXPECT_EQ(buf[0].pid, 7U);
  EXPECT_EQ(buf[0].smUtil, 50U);
  EXPECT_EQ(buf[1].memUtil, 20U);
  EXPECT_EQ(fn().device_get_process_utilization(device(0), buf, &count, buf[0].timeStamp),
            NVML_ERROR_NOT_FOUND);
  EXPECT_EQ(fn().device_get_process_utilization(device(1), buf, &count, 0),
            NVML_ERROR_NOT_SUPPORTED);
}

TEST_F(FakeNvmlPerf, PcieThroughputCountersAndEccRegistration) {
  TempScenario sc(R"({"latency_us": {"nvmlDeviceGetPcieThroughput": 0},
                      "devices": [{"fields": {"pcie_rx_kb_per_s": 5120}}, {"ecc_enabled": false}]})");
  open(sc.path());
  unsigned kb = 1;
  ASSERT_EQ(fn().device_get_pcie_throughput(device(0), NVML_PCIE_UTIL_TX_BYTES, &kb), NVML_SUCCESS);
  EXPECT_EQ(kb, 0U);
  ASSERT_EQ(fn().device_get_pcie_throughput(device(0), NVML_PCIE_UTIL_RX_BYTES, &kb), NVML_SUCCESS);
  EXPECT_EQ(kb, 5120U);
  // An out-of-range counter, passed the way a C caller could (the fake takes unsigned int).
  using RawPcie = nvmlReturn_t (*)(nvmlDevice_t, unsigned int, unsigned int*);
  const auto raw_pcie = reinterpret_cast<RawPcie>(fn().device_get_pcie_throughput.pointer());
  EXPECT_EQ(raw_pcie(device(0), 9U, &kb), NVML_ERROR_INVALID_ARGUMENT);
  nvmlEventSet_t set = nullptr;
  ASSERT_EQ(fn().event_set_create(&set), NVML_SUCCESS);
  EXPECT_EQ(fn().device_register_events(device(1), nvml::kEventTypeSingleBitEccError, set),
            NVML_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(fn().device_register_events(device(1), nvml::kEventTypeXidCriticalError, set),
            NVML_SUCCESS);
  EXPECT_EQ(fn().event_set_free(set), NVML_SUCCESS);
}

}  // namespace
}  // namespace gpumon::fake::testing
