// SPDX-License-Identifier: MIT
#include "fake_nvml/scenario_parser.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "fake_nvml/series.h"

namespace gpumon::fake {
namespace {

Scenario parse_ok(std::string_view json) {
  ParseResult r = parse_scenario(json, "test");
  EXPECT_TRUE(r.scenario.has_value()) << r.error;
  return r.scenario.value_or(Scenario{});
}

std::string parse_error(std::string_view json) {
  ParseResult r = parse_scenario(json, "test");
  EXPECT_FALSE(r.scenario.has_value());
  return r.error;
}

TEST(ScenarioParser, MinimalScenarioGetsDefaults) {
  const Scenario sc = parse_ok(R"({"devices": [{}, {}]})");
  EXPECT_EQ(sc.name, "test");
  EXPECT_EQ(sc.driver_version, "580.159.04");
  EXPECT_EQ(sc.cuda_driver_version, 13000);
  EXPECT_EQ(sc.init_error, 0);
  ASSERT_EQ(sc.devices.size(), 2U);
  const DeviceSpec& d1 = sc.devices[1];
  EXPECT_EQ(d1.uuid, "GPU-fa4e0000-0000-4000-8000-000000000001");
  EXPECT_EQ(d1.pci_bus_id, "00000000:02:00.0");
  EXPECT_EQ(d1.minor_number, 1U);
  EXPECT_NE(sc.devices[0].serial, d1.serial);
  EXPECT_TRUE(d1.energy_from_power);
  EXPECT_DOUBLE_EQ(evaluate(d1.at(Field::kSmClockMhz), 3), 1980);
  EXPECT_DOUBLE_EQ(evaluate(d1.at(Field::kPowerLimitMw), 3), 700000);
}

TEST(ScenarioParser, ReadsEveryKindOfSeries) {
  const Scenario sc = parse_ok(R"({"devices": [{"fields": {
    "utilization_gpu_pct": 55,
    "utilization_memory_pct": {"constant": 12},
    "temperature_gpu_c": {"ramp": {"from": 30, "to": 80, "start_s": 10, "duration_s": 20}},
    "power_draw_mw": {"step": [[0, 100000], [5, 300000]]},
    "sm_clock_mhz": {"points": {"values": [[0, 1000], [1, 2000]], "interpolate": "linear", "repeat_s": 2}},
    "fan_speed_pct": {"periodic": {"min": 10, "max": 30, "period_s": 8, "shape": "square", "duty": 0.25}},
    "memory_used_bytes": {"constant": 1000, "noise": 10, "clamp": [995, 1005]},
    "energy_mj": 123
  }}]})");
  const DeviceSpec& d = sc.devices.at(0);
  EXPECT_DOUBLE_EQ(evaluate(d.at(Field::kUtilizationGpuPct), 9), 55);
  EXPECT_DOUBLE_EQ(evaluate(d.at(Field::kUtilizationMemoryPct), 9), 12);
  EXPECT_DOUBLE_EQ(evaluate(d.at(Field::kTemperatureGpuC), 20), 55);
  EXPECT_DOUBLE_EQ(evaluate(d.at(Field::kPowerDrawMw), 6), 300000);
  EXPECT_DOUBLE_EQ(evaluate(d.at(Field::kSmClockMhz), 2.5), 1500);
  EXPECT_DOUBLE_EQ(evaluate(d.at(Field::kFanSpeedPct), 1), 30);
  EXPECT_DOUBLE_EQ(evaluate(d.at(Field::kFanSpeedPct), 3), 10);
  const double mem = evaluate(d.at(Field::kMemoryUsedBytes), 1.234);
  EXPECT_GE(mem, 995);
  EXPECT_LE(mem, 1005);
  EXPECT_FALSE(d.energy_from_power);
  // Defaults that follow other fields: instant power is the power series, graphics the SM one.
  EXPECT_DOUBLE_EQ(evaluate(d.at(Field::kPowerInstantMw), 6), 300000);
  EXPECT_DOUBLE_EQ(evaluate(d.at(Field::kGraphicsClockMhz), 2.5), 1500);
}

TEST(ScenarioParser, ReadsStaticFactsRulesProcessesAndEvents) {
  const Scenario sc = parse_ok(R"({
    "name": "named", "driver_version": "550.1", "nvml_version": "12.550.1", "cuda_driver_version": 12040,
    "init": {"error": "NVML_ERROR_NO_PERMISSION", "latency_us": 9000},
    "latency_us": {"nvmlDeviceGetTotalEnergyConsumption": 2400},
    "devices": [{
      "name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-1", "serial": "42", "pci_bus_id": "0000:1b:00.0",
      "pci_device_id": "0x233010DE", "minor_number": 3, "memory_total_bytes": 85520809984,
      "memory_reserved_bytes": 1000, "persistence_mode": false, "ecc_enabled": false,
      "power_limit_mw": 500000, "energy_at_start_mj": 5,
      "unsupported": ["fan_speed_pct", "serial"],
      "errors": [{"call": "nvmlDeviceGetComputeRunningProcesses", "error": "UNKNOWN", "every_nth_call": 3},
                 {"field": "power_draw_mw", "error": "NO_PERMISSION", "from_s": 1, "until_s": 2}],
      "latency_us": {"nvmlDeviceGetTemperature": 1, "nvmlDeviceGetPowerUsage": {"us": 5, "mode": "sleep", "from_s": 3}},
      "processes": [{"pid": 17, "name": "python3", "used_memory_bytes": 1024, "start_s": 1, "end_s": 9,
                     "visible_from_call": 2}],
      "xid_events": [{"at_s": 9, "xid": 79}, {"at_s": 2, "xid": 13}],
      "lost_at_s": 10, "recovers_at_s": 20
    }]})");
  EXPECT_EQ(sc.name, "named");
  EXPECT_EQ(sc.cuda_driver_version, 12040);
  EXPECT_EQ(sc.init_error, 4);
  EXPECT_DOUBLE_EQ(sc.init_latency_us, 9000);
  ASSERT_EQ(sc.latencies.size(), 1U);
  const DeviceSpec& d = sc.devices.at(0);
  EXPECT_EQ(d.pci_bus_id, "00000000:1B:00.0");  // normalised
  EXPECT_EQ(d.pci_bus, 0x1BU);
  EXPECT_EQ(d.pci_device_id, 0x233010DEU);
  EXPECT_TRUE(d.unsupported.test(static_cast<std::size_t>(Field::kSerial)));
  ASSERT_EQ(d.errors.size(), 2U);
  EXPECT_EQ(d.errors[0].every_nth, 3U);
  EXPECT_EQ(d.errors[1].field, Field::kPowerDrawMw);
  ASSERT_EQ(d.latencies.size(), 2U);
  ASSERT_EQ(d.processes.size(), 1U);
  EXPECT_EQ(d.processes[0].visible_from_call, 2U);
  ASSERT_EQ(d.xid_events.size(), 2U);
  EXPECT_EQ(d.xid_events[0].xid, 13U);  // sorted by time
  EXPECT_FALSE(d.lost_at(9.9));
  EXPECT_TRUE(d.lost_at(10));
  EXPECT_FALSE(d.lost_at(20));
}

TEST(ScenarioParser, TemplatesRepeatDevicesWithPlaceholdersAndOverrides) {
  const Scenario sc = parse_ok(R"({
    "device_template": {"uuid": "GPU-x-{index:04x}", "pci_bus_id": "{index:08X}:18:00.0",
                        "fields": {"temperature_gpu_c": {"periodic": {"min": 50, "max": 60, "period_s": 10}}},
                        "processes": [{"pid": "7{index:03d}", "name": "rank{index}"}]},
    "repeat_devices": 300,
    "devices": [{"name": "first", "fields": {"temperature_gpu_c": {"periodic": {"max": 90}}}}]})");
  ASSERT_EQ(sc.devices.size(), 300U);
  EXPECT_EQ(sc.devices[0].name, "first");
  EXPECT_EQ(sc.devices[1].name, "NVIDIA Fake GPU");
  EXPECT_EQ(sc.devices[255].uuid, "GPU-x-00ff");
  EXPECT_EQ(sc.devices[299].pci_bus_id, "0000012B:18:00.0");
  EXPECT_EQ(sc.devices[42].processes.at(0).pid, 7042U);
  EXPECT_EQ(sc.devices[42].processes.at(0).name, "rank42");
  // The override merged into the template's wave: max changed, period kept.
  const Series& t0 = sc.devices[0].at(Field::kTemperatureGpuC);
  EXPECT_DOUBLE_EQ(t0.max, 90);
  EXPECT_DOUBLE_EQ(t0.period_s, 10);
}

TEST(ScenarioParser, ErrorsNameTheJsonPath) {
  EXPECT_EQ(parse_error(R"({"devices": [{}, {}, {"fields": {"power_draw_mw":
              {"ramp": {"from": 1, "to": 2, "duration_s": 0}}}}]})"),
            "devices[2].fields.power_draw_mw.ramp.duration_s: must be > 0");
  EXPECT_EQ(parse_error(R"({"devices": [{"colour": 1}]})").substr(0, 32),
            "devices[0]: unknown key \"colour\"");
  // A device's keys are too many to list: the nearest are named.
  EXPECT_EQ(parse_error(R"({"devices": [{"vbios_versoin": "1"}]})"),
            "devices[0]: unknown key \"vbios_versoin\" (nearest: vbios_version, "
            "pci_bus_id, board_id; every key is in docs/scenarios.md)");
  EXPECT_EQ(parse_error(R"({"devices": [{"memory_total_bytes": "lots"}]})"),
            "devices[0].memory_total_bytes: expected a whole number, got string");
  EXPECT_EQ(
      parse_error(R"({"devices": [{"fields": {"power_draw_mw": {"step": [[1, 5], [1, 6]]}}}]})"),
      "devices[0].fields.power_draw_mw.step[1]: times must increase strictly");
  EXPECT_EQ(parse_error(R"({"devices": [{"fields": {"pstate": {"constant": 0, "noise": 1}}}]})"),
            "devices[0].fields.pstate.noise: codes and bitmasks cannot have noise");
  EXPECT_EQ(parse_error(R"({"devices": [{"fields": {"temperature_gpu_c": "NaN"}}]})"),
            "devices[0].fields.temperature_gpu_c: expected an object, got string");
  EXPECT_EQ(
      parse_error(
          R"({"devices": [{"errors": [{"call": "nvmlDeviceGetWarpDrive", "error": "UNKNOWN"}]}]})"),
      "devices[0].errors[0].call: not an NVML entry point the fake library exports");
  EXPECT_EQ(
      parse_error(R"({"devices": [{"errors": [{"field": "power_draw_mw", "error": "OOPS"}]}]})"),
      "devices[0].errors[0].error: must be an NVML error name such as \"NOT_SUPPORTED\"");
  EXPECT_EQ(parse_error(R"({"devices": [{"lost_at_s": 5, "recovers_at_s": 4}]})"),
            "devices[0].recovers_at_s: must be > lost_at_s");
  EXPECT_EQ(parse_error(R"({"devices": [{"uuid": "GPU-a"}, {"uuid": "GPU-a"}]})"),
            "devices[1].uuid: same as devices[0]");
  EXPECT_EQ(parse_error(R"({"devices": [{"pci_bus_id": "18:00.0"}]})").substr(0, 28),
            "devices[0].pci_bus_id: must ");
  EXPECT_EQ(parse_error(R"({"device_template": {"uuid": "GPU-{idx}"}, "repeat_devices": 2})"),
            "device_template.uuid: unknown placeholder (placeholders are {index} or {index:04x})");
  EXPECT_EQ(parse_error(R"({"devices": [], "devices": []})"),
            "invalid JSON: duplicate key \"devices\"");
  EXPECT_EQ(
      parse_error(R"({"init": {"error": "DRIVER_NOT_LOADED"}})"),
      "(top level): missing key \"devices\" (or \"device_template\" with \"repeat_devices\")");
}

TEST(ScenarioParser, RejectsAbsurdSizes) {
  EXPECT_NE(parse_error(R"({"device_template": {}, "repeat_devices": 1025})").find("at most 1024"),
            std::string::npos);
  EXPECT_NE(parse_error(R"({"devices": [{"memory_total_bytes": 1e300}]})").find("at most"),
            std::string::npos);
  std::string many = R"({"devices": [{"fields": {"power_draw_mw": {"step": [)";
  for (int i = 0; i <= 100000; ++i) many += (i ? ",[" : "[") + std::to_string(i) + ",1]";
  many += "]}}}]}";
  EXPECT_NE(parse_error(many).find("too many elements (100001, at most 100000)"),
            std::string::npos);
}

TEST(ScenarioParser, ReturnCodeNames) {
  EXPECT_EQ(return_code_from_name("GPU_IS_LOST"), 15);
  EXPECT_EQ(return_code_from_name("NVML_ERROR_LIB_RM_VERSION_MISMATCH"), 18);
  EXPECT_EQ(return_code_from_name("UNKNOWN"), 999);
  EXPECT_EQ(return_code_from_name("lost"), std::nullopt);
}

TEST(ScenarioParser, ResolvesBareNamesThenPaths) {
  const std::string dir = GPUMON_TEST_SCENARIO_DIR;
  EXPECT_EQ(resolve_scenario_path("demo", "", dir).path, dir + "/demo.json");
  EXPECT_EQ(resolve_scenario_path("demo", "/nonexistent", dir).path, dir + "/demo.json");
  EXPECT_EQ(resolve_scenario_path("./x.json", "", dir).path, "./x.json");
  const ResolvedPath missing = resolve_scenario_path("nope", "/nonexistent", dir);
  EXPECT_TRUE(missing.path.empty());
  EXPECT_NE(missing.error.find("/nonexistent/nope.json"), std::string::npos);
}

// Every scenario shipped in testdata/ parses, and the demo is what the docs promise.
TEST(ScenarioFiles, AllParse) {
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(GPUMON_TEST_SCENARIO_DIR)) {
    if (entry.path().extension() != ".json") continue;
    const ParseResult r = load_scenario_file(entry.path().string());
    EXPECT_TRUE(r.scenario.has_value()) << r.error;
    if (r.scenario) {
      EXPECT_EQ(r.scenario->name, entry.path().stem().string());
    }
    ++count;
  }
  EXPECT_GE(count, 12);
}

TEST(ScenarioFiles, DemoIsEightH200sInTraining) {
  const ParseResult r = load_scenario_file(std::string(GPUMON_TEST_SCENARIO_DIR) + "/demo.json");
  ASSERT_TRUE(r.scenario) << r.error;
  const Scenario& sc = *r.scenario;
  ASSERT_EQ(sc.devices.size(), 8U);
  std::set<unsigned> pids;
  for (const DeviceSpec& d : sc.devices) {
    EXPECT_EQ(d.name, "NVIDIA H200");
    EXPECT_EQ(d.memory_total_bytes, 150754820096ULL);
    EXPECT_EQ(d.max_sm_clock_mhz, 1980U);
    EXPECT_EQ(d.power_limit_mw, 700000U);
    ASSERT_EQ(d.processes.size(), 1U);
    pids.insert(d.processes[0].pid);
    for (double t = 0; t < 120; t += 0.37) {
      const double util = evaluate(d.at(Field::kUtilizationGpuPct), t);
      EXPECT_GE(util, 50);
      const double watts = evaluate(d.at(Field::kPowerInstantMw), t) / 1000;
      EXPECT_GE(watts, 430);
      EXPECT_LE(watts, 700);
    }
  }
  EXPECT_EQ(pids.size(), 8U);
  EXPECT_EQ(sc.devices[0].pci_bus_id, "00000000:18:00.0");
  EXPECT_EQ(evaluate(sc.devices[5].at(Field::kClockEventReasons), 15), 32);
  EXPECT_EQ(evaluate(sc.devices[4].at(Field::kClockEventReasons), 15), 0);
  EXPECT_EQ(evaluate(sc.devices[3].at(Field::kEccCorrectedVolatile), 45), 2);
}

}  // namespace
}  // namespace gpumon::fake
