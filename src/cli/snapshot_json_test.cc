// SPDX-License-Identifier: MIT
#include "cli/snapshot_json.h"

#include <gtest/gtest.h>

#include "cli/test_snapshots.h"

namespace gpumon::cli {
namespace {

using nlohmann::json;
using namespace gpumon::cli::testing;

Snapshot two_gpus() {
  Snapshot s = empty_snapshot();
  s.gpus = {healthy_gpu(0), gpu_with_missing_fields(1), lost_gpu(2)};
  s.processes = {visible_process(0), invisible_process(0)};
  return s;
}

TEST(SnapshotJson, TopLevel) {
  Snapshot s = two_gpus();
  const json j = json::parse(format_snapshot_json(s, JsonOptions{false, false, "0.1.0"}));
  EXPECT_EQ(j["gpumon_version"], "0.1.0");
  EXPECT_TRUE(j["simulated"].is_null());
  EXPECT_FALSE(j.contains("simulated_scenario")) << "one key, as every gpumon JSON";
  EXPECT_EQ(j["host"], "node01");
  EXPECT_EQ(j["timestamp"], "2026-12-02T18:46:52.153Z");
  EXPECT_EQ(j["timestamp_unix_s"].dump(), "1796237212.153");
  EXPECT_EQ(j["driver_version"], "580.159.04");
  EXPECT_EQ(j["cuda_driver_version"], 13000);
  EXPECT_EQ(j["gpus"].size(), 3U);
  EXPECT_EQ(j["processes"].size(), 2U);
}

TEST(SnapshotJson, HealthyGpuInBaseUnits) {
  const json g = snapshot_to_json(two_gpus(), JsonOptions{})["gpus"][0];
  const json expected = json::parse(R"({
    "index": 0, "lost": false, "name": "NVIDIA H200", "pci_bus_id": "00000000:18:00.0",
    "utilization_gpu_percent": 98, "utilization_memory_percent": 45,
    "memory_total_bytes": 150323855360, "memory_used_bytes": 75161927680,
    "memory_free_bytes": 75161927680, "memory_reserved_bytes": 645922816,
    "temperature_gpu_c": 62, "temperature_memory_c": 70,
    "power_draw_w": 612.4, "power_limit_w": 700.0,
    "sm_clock_hz": 1980000000, "sm_clock_max_hz": 1980000000,
    "memory_clock_hz": 3201000000, "memory_clock_max_hz": 3201000000,
    "pstate": 0, "clock_event_reasons_mask": 0, "clock_event_reasons": [],
    "ecc_errors_corrected_volatile": 0, "ecc_errors_uncorrected_volatile": 0,
    "process_count": 1})");
  EXPECT_EQ(g, expected) << g.dump(2);
}

TEST(SnapshotJson, MissingIsNullWithAReason) {
  const json g = snapshot_to_json(two_gpus(), JsonOptions{})["gpus"][1];
  EXPECT_TRUE(g["utilization_gpu_percent"].is_null());
  EXPECT_TRUE(g["memory_used_bytes"].is_null());
  EXPECT_TRUE(g["power_draw_w"].is_null());
  EXPECT_EQ(g["unavailable"]["utilization_gpu_percent"], "not available");
  EXPECT_EQ(g["unavailable"]["utilization_memory_percent"], "error");
  EXPECT_EQ(g["unavailable"]["memory_used_bytes"], "insufficient permissions");
  EXPECT_EQ(g["unavailable"]["temperature_memory_c"], "not supported");
  EXPECT_EQ(g["temperature_gpu_c"], 62);  // present values stay
  EXPECT_FALSE(g["unavailable"].contains("temperature_gpu_c"));
  const json lost = snapshot_to_json(two_gpus(), JsonOptions{})["gpus"][2];
  EXPECT_EQ(lost["lost"], true);
  EXPECT_EQ(lost["unavailable"]["sm_clock_hz"], "GPU is lost");
  EXPECT_FALSE(snapshot_to_json(two_gpus(), JsonOptions{})["gpus"][0].contains("unavailable"));
}

TEST(SnapshotJson, Processes) {
  const json procs = snapshot_to_json(two_gpus(), JsonOptions{})["processes"];
  const json& p = procs[0];
  EXPECT_EQ(p["pid"], 4242);
  EXPECT_EQ(p["gpu_index"], 0);
  EXPECT_EQ(p["host_visibility"], "visible");
  EXPECT_EQ(p["user"], "alice");
  EXPECT_EQ(p["uid"], 1000);
  EXPECT_EQ(p["command_line"], "python train.py --config configs/llama-8b.yaml --lr 3e-4");
  EXPECT_EQ(p["cpu_percent"], 98.5);
  EXPECT_EQ(p["cpu_percent_window"], "interval");
  EXPECT_EQ(p["host_memory_rss_bytes"], 13199474688ULL);
  EXPECT_EQ(p["used_gpu_memory_bytes"], 75161927680ULL);
  EXPECT_EQ(p["start_time"], "2026-12-02T16:46:40.000Z");
  EXPECT_EQ(p["start_time_unix_s"], 1796230000.0);
  const json& q = procs[1];
  EXPECT_EQ(q["host_visibility"], "not_visible");
  EXPECT_EQ(q["nvml_process_name"], "python3");
  EXPECT_TRUE(q["user"].is_null());
  EXPECT_TRUE(q["command_line"].is_null());
  EXPECT_EQ(q["unavailable"]["user"], "not available");
}

TEST(SnapshotJson, SimulatedScenarioNamed) {
  Snapshot s = two_gpus();
  s.system.simulated_scenario = "demo";
  const json j = snapshot_to_json(s, JsonOptions{});
  EXPECT_EQ(j["simulated"], "demo");
}

TEST(SnapshotJson, IdsOnlyWhenAskedFor) {
  const Snapshot s = two_gpus();
  EXPECT_FALSE(snapshot_to_json(s, JsonOptions{})["gpus"][0].contains("uuid"));
  EXPECT_FALSE(snapshot_to_json(s, JsonOptions{})["gpus"][0].contains("serial"));
  const json with = snapshot_to_json(s, JsonOptions{true, true, ""})["gpus"][0];
  EXPECT_EQ(with["uuid"], "GPU-5ca1ab1e-0000-4000-8000-000000000000");
  EXPECT_EQ(with["serial"], "1650000000000");
}

TEST(SnapshotJson, InvalidUtf8IsReplacedNotThrown) {
  Snapshot s = two_gpus();
  s.processes[0].host.command_line = std::string("bad\xff\xfe");
  std::string out;
  ASSERT_NO_THROW(out = format_snapshot_json(s, JsonOptions{}));
  EXPECT_NE(out.find("bad\xEF\xBF\xBD\xEF\xBF\xBD"), std::string::npos);
  EXPECT_EQ(out.back(), '\n');
}

}  // namespace
}  // namespace gpumon::cli
