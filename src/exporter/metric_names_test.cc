// SPDX-License-Identifier: MIT
#include "exporter/metric_names.h"

#include <gtest/gtest.h>

#include <set>

namespace gpumon::exporter {
namespace {

TEST(MetricNames, NativeNamesFollowPrometheusConventions) {
  std::set<std::string_view> names;
  for (const FamilySpec& f : native_families()) {
    EXPECT_TRUE(valid_metric_name(f.name)) << f.name;
    EXPECT_TRUE(names.insert(f.name).second) << "duplicate " << f.name;
    EXPECT_TRUE(f.name.starts_with("gpumon_gpu_")) << f.name;
    EXPECT_EQ(f.type == MetricType::kCounter, f.name.ends_with("_total")) << f.name;
    // Base units only: no percent, no megahertz, no milli-anything.
    for (std::string_view bad : {"pct", "percent", "mhz", "milli", "_mj", "_kb"}) {
      EXPECT_EQ(f.name.find(bad), std::string_view::npos) << f.name;
    }
    // The help says where the value comes from.
    EXPECT_NE(f.help.find(metric_info(f.id).source), std::string::npos) << f.help;
  }
  EXPECT_EQ(names.size(), native_families().size());
}

TEST(MetricNames, ScalesTurnCatalogUnitsIntoBaseUnits) {
  EXPECT_EQ(find_family(native_families(), MetricId::kUtilizationGpuPct)->scale, 0.01);
  EXPECT_EQ(find_family(native_families(), MetricId::kFanSpeedPct)->scale, 0.01);
  EXPECT_EQ(find_family(native_families(), MetricId::kSmClockMhz)->scale, 1e6);
  EXPECT_EQ(find_family(native_families(), MetricId::kSmActiveRatio)->scale, 1);
  EXPECT_EQ(find_family(native_families(), MetricId::kEnergyJ)->name,
            "gpumon_gpu_energy_joules_total");
  EXPECT_EQ(find_family(native_families(), MetricId::kGpmWindowS), nullptr);
  EXPECT_EQ(find_family(native_families(), MetricId::kClockEventReasons), nullptr);
}

TEST(MetricNames, ScalingPrintsTheDecimalAUserExpects) {
  const FamilySpec& util = *find_family(native_families(), MetricId::kUtilizationGpuPct);
  for (int pct = 0; pct <= 100; ++pct) {
    EXPECT_EQ(scaled(util, pct), pct / 100.0);  // correctly rounded: 47 -> 0.47 exactly
  }
  EXPECT_EQ(scaled(*find_family(native_families(), MetricId::kSmClockMhz), 1980), 1.98e9);
  EXPECT_EQ(scaled(*find_family(dcgm_families(), MetricId::kMemoryUsedBytes), 3 << 20), 3);
}

TEST(MetricNames, HelpNamesTheWindowOfAveragedMetrics) {
  const FamilySpec* sm = find_family(native_families(), MetricId::kSmActiveRatio);
  ASSERT_NE(sm, nullptr);
  EXPECT_NE(sm->help.find("average since the previous GPM sample"), std::string::npos) << sm->help;
  const FamilySpec* pmax = find_family(native_families(), MetricId::kPowerMaxW);
  ASSERT_NE(pmax, nullptr);
  EXPECT_NE(pmax->help.find("nvmlDeviceGetSamples"), std::string::npos) << pmax->help;
}

TEST(MetricNames, DcgmTableUsesDcgmNamesAndUnits) {
  std::set<std::string_view> names;
  for (const FamilySpec& f : dcgm_families()) {
    EXPECT_TRUE(valid_metric_name(f.name)) << f.name;
    EXPECT_TRUE(names.insert(f.name).second) << "duplicate " << f.name;
    EXPECT_TRUE(f.name.starts_with("DCGM_FI_")) << f.name;
  }
  // Typed as dcgm-exporter's default-counters.csv types them.
  const std::set<std::string_view> counters = {
      "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",  "DCGM_FI_DEV_PCIE_REPLAY_COUNTER",
      "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL",         "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",
      "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS",
      "DCGM_FI_DEV_POWER_VIOLATION",           "DCGM_FI_DEV_SYNC_BOOST_VIOLATION"};
  for (const FamilySpec& f : dcgm_families()) {
    EXPECT_EQ(f.type, counters.count(f.name) ? MetricType::kCounter : MetricType::kGauge) << f.name;
  }
  for (std::string_view n :
       {"DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_GPU_TEMP",
        "DCGM_FI_DEV_SM_CLOCK", "DCGM_FI_DEV_FB_USED", "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE"}) {
    EXPECT_EQ(names.count(n), 1U) << n << " (used by Grafana dashboard 12239)";
  }
  EXPECT_EQ(find_family(dcgm_families(), MetricId::kUtilizationGpuPct)->scale, 1);  // percent
  EXPECT_EQ(find_family(dcgm_families(), MetricId::kMemoryUsedBytes)->scale, 1.0 / 1048576);
  EXPECT_EQ(find_family(dcgm_families(), MetricId::kEnergyJ)->scale, 1000);  // mJ
  EXPECT_EQ(find_family(dcgm_families(), MetricId::kSmClockMhz)->scale, 1);  // MHz
  // DCGM's framebuffer fields are whole MiB: 1.5 MiB used is 1.
  EXPECT_EQ(scaled(*find_family(dcgm_families(), MetricId::kMemoryUsedBytes), 3 << 19), 1);
  EXPECT_EQ(scaled(*find_family(dcgm_families(), MetricId::kMemoryReservedBytes), 644939776), 615);
  // DCGM's violation time is ns, whole: the H200's 40139034816 ns at its power cap comes back
  // exactly from the catalog's seconds.
  EXPECT_EQ(
      scaled(*find_family(dcgm_families(), MetricId::kClockEventSwPowerCapS), 40139034816 / 1e9),
      40139034816.0);
  // Every default counter of dcgm-exporter NVML can give (NVLink and XID are the renderer's).
  for (std::string_view n :
       {"DCGM_FI_DEV_FB_RESERVED", "DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "DCGM_FI_DEV_ENC_UTIL",
        "DCGM_FI_DEV_DEC_UTIL", "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS",
        "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "DCGM_FI_DEV_ROW_REMAP_FAILURE",
        "DCGM_FI_PROF_PCIE_TX_BYTES", "DCGM_FI_PROF_PCIE_RX_BYTES"}) {
    EXPECT_EQ(names.count(n), 1U) << n;
  }
}

TEST(MetricNames, ClockEventReasonsAreTheNamedBits) {
  const auto reasons = clock_event_reasons();
  ASSERT_EQ(reasons.size(), 9U);
  EXPECT_EQ(reasons[0].first, kClockEventGpuIdle);
  EXPECT_EQ(reasons[0].second, "gpu_idle");
  EXPECT_EQ(reasons[2].second, "sw_power_cap");
  EXPECT_EQ(reasons[8].first, kClockEventDisplayClockSetting);
  for (const auto& [bit, name] : reasons) EXPECT_TRUE(valid_label_name(name)) << name;
}

}  // namespace
}  // namespace gpumon::exporter
