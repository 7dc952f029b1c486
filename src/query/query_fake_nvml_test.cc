// SPDX-License-Identifier: MIT
// gpumon query end to end through the real loader and NvmlBackend, against gpumon's fake NVML
// library (build/fake-nvml/libnvidia-ml.so.1) playing the shipped scenarios.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include "query/query_command.h"
#include "query/test_backend.h"

namespace gpumon::query {
namespace {

const std::string kFakeLibrary = GPUMON_QUERY_FAKE_NVML;

// The H200 of testdata/nvidia-smi/h200 (cases.txt, "all csv"), as a scenario of our own so that
// tuning the shipped scenarios cannot break these tests. The bytes are those NVML gave there.
constexpr const char* kH200 = R"({
  "name": "query-h200", "description": "gpumon query's end-to-end H200",
  "driver_version": "580.159.04",
  "devices": [{
    "name": "NVIDIA H200", "uuid": "GPU-5ca1ab1e-0000-4000-8000-000000000000",
    "serial": "1650000000000", "pci_bus_id": "00000000:00:06.0", "pci_device_id": "0x233510DE",
    "memory_total_bytes": 150754820096, "memory_reserved_bytes": 644939776,
    "power_limit_mw": 700000, "unsupported": ["fan_speed_pct"],
    "fields": {"utilization_gpu_pct": 0, "utilization_memory_pct": 0, "memory_used_bytes": 0,
               "temperature_gpu_c": 38, "temperature_memory_c": 40, "power_draw_mw": 78910,
               "power_instant_mw": 78910, "sm_clock_mhz": 345, "graphics_clock_mhz": 345,
               "mem_clock_mhz": 3201, "pstate": 0, "clock_event_reasons": 1},
    "processes": [{"pid": 848, "name": "python3", "used_memory_bytes": 96100000000}]
  }]
})";

// Two GPUs; GPU 1 answers GPU_IS_LOST from scenario time 5 s on.
constexpr const char* kLost = R"({
  "name": "query-lost", "description": "GPU 1 falls off the bus at 5 s",
  "device_template": {"name": "NVIDIA H200", "unsupported": ["fan_speed_pct"],
                      "fields": {"utilization_gpu_pct": 95, "power_draw_mw": 610000}},
  "repeat_devices": 2,
  "devices": [{"pci_bus_id": "00000000:18:00.0"},
              {"pci_bus_id": "00000000:2A:00.0", "lost_at_s": 5.0}]
})";

constexpr const char* kNoDriver = R"({
  "name": "query-no-driver", "description": "nvmlInit answers DRIVER_NOT_LOADED",
  "init": {"error": "DRIVER_NOT_LOADED"}, "devices": []
})";

// Sets environment variables for one test and restores them after.
class ScopedEnv {
 public:
  ~ScopedEnv() {
    for (const auto& [name, old] : saved_) {
      if (old)
        setenv(name.c_str(), old->c_str(), 1);
      else
        unsetenv(name.c_str());
    }
  }
  void set(const std::string& name, const std::string& value) {
    if (saved_.count(name) == 0) {
      const char* old = std::getenv(name.c_str());
      saved_[name] = old != nullptr ? std::optional<std::string>(old) : std::nullopt;
    }
    setenv(name.c_str(), value.c_str(), 1);
  }

 private:
  std::map<std::string, std::optional<std::string>> saved_;
};

struct Result {
  int rc;
  std::string out;
  std::string err;
};

class FakeNvml : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(kFakeLibrary)) GTEST_SKIP() << "not built: " << kFakeLibrary;
    env_.set("GPUMON_NVML_LIBRARY", kFakeLibrary);
    env_.set("GPUMON_FAKE_TIME_OFFSET_S", "0");
    env_.set("GPUMON_FAKE_TIME_SCALE", "1");
  }
  // Writes `json` to a scenario file and points the fake library at it.
  void play(const char* json) {
    const std::string path = ::testing::TempDir() + "gpumon-query-scenario-" +
                             std::to_string(getpid()) + "-" + std::to_string(files_++) + ".json";
    std::ofstream(path) << json;
    paths_.push_back(path);
    env_.set("GPUMON_FAKE_SCENARIO", path);
  }
  void TearDown() override {
    for (const std::string& p : paths_) std::remove(p.c_str());
  }
  Result query(const std::vector<std::string>& args) {
    std::ostringstream out, err;
    const int rc = run_query_command(args, out, err);
    return {rc, out.str(), err.str()};
  }
  ScopedEnv env_;
  std::vector<std::string> paths_;
  int files_ = 0;
};

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// nvidia-smi's bytes from the capture, timestamp aside, through the real loader and backend.
TEST_F(FakeNvml, H200MatchesTheCaptureByteForByte) {
  play(kH200);
  const std::string fields =
      "index,name,gpu_name,uuid,gpu_uuid,serial,pci.bus_id,gpu_bus_id,driver_version,pstate,"
      "fan.speed,temperature.gpu,temperature.memory,utilization.gpu,utilization.memory,"
      "memory.total,memory.used,memory.free,memory.reserved,power.draw,power.draw.instant,"
      "power.limit,enforced.power.limit,clocks.sm,clocks.current.sm,clocks.mem,"
      "clocks.current.memory,clocks.gr,clocks.max.sm,clocks.max.memory,clocks.max.gr,"
      "clocks_event_reasons.active,clocks_throttle_reasons.active,"
      "clocks_event_reasons.sw_power_cap,clocks_event_reasons.hw_thermal_slowdown,"
      "ecc.errors.corrected.volatile.total,ecc.errors.uncorrected.volatile.total,"
      "ecc.mode.current,persistence_mode,count,pci.device_id";
  // cases.txt "all csv" and "all nounits" without timestamp, power.draw.average, compute_mode.
  const std::string header =
      "index, name, name, uuid, uuid, serial, pci.bus_id, pci.bus_id, driver_version, pstate, "
      "fan.speed [%], temperature.gpu, temperature.memory, utilization.gpu [%], "
      "utilization.memory [%], memory.total [MiB], memory.used [MiB], memory.free [MiB], "
      "memory.reserved [MiB], power.draw [W], power.draw.instant [W], power.limit [W], "
      "enforced.power.limit [W], clocks.current.sm [MHz], clocks.current.sm [MHz], "
      "clocks.current.memory [MHz], clocks.current.memory [MHz], clocks.current.graphics [MHz], "
      "clocks.max.sm [MHz], clocks.max.memory [MHz], clocks.max.graphics [MHz], "
      "clocks_event_reasons.active, clocks_event_reasons.active, "
      "clocks_event_reasons.sw_power_cap, clocks_event_reasons.hw_thermal_slowdown, "
      "ecc.errors.corrected.volatile.total, ecc.errors.uncorrected.volatile.total, "
      "ecc.mode.current, persistence_mode, count, pci.device_id\n";
  const std::string ids =
      "0, NVIDIA H200, NVIDIA H200, GPU-5ca1ab1e-0000-4000-8000-000000000000, "
      "GPU-5ca1ab1e-0000-4000-8000-000000000000, 1650000000000, 00000000:00:06.0, "
      "00000000:00:06.0, 580.159.04, P0, [N/A], 38, 40, ";
  const std::string tail =
      "0x0000000000000001, 0x0000000000000001, Not Active, Not Active, 0, 0, Enabled, Enabled, "
      "1, 0x233510DE\n";
  Result r = query({"--query-gpu=" + fields, "--format=csv"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.err, "gpumon: simulated GPUs (scenario query-h200)\n");  // never in the CSV
  EXPECT_EQ(r.out, header + ids +
                       "0 %, 0 %, 143771 MiB, 0 MiB, 143156 MiB, 616 MiB, 78.91 W, 78.91 W, "
                       "700.00 W, 700.00 W, 345 MHz, 345 MHz, 3201 MHz, 3201 MHz, 345 MHz, "
                       "1980 MHz, 3201 MHz, 1980 MHz, " +
                       tail);
  r = query({"--query-gpu=" + fields, "--format=csv,nounits"});
  EXPECT_EQ(r.out, header + ids +
                       "0, 0, 143771, 0, 143156, 616, 78.91, 78.91, 700.00, 700.00, 345, 345, "
                       "3201, 3201, 345, 1980, 3201, 1980, " +
                       tail);
}

// The --query-gpu fields of testdata/nvidia-smi/h200/modes/fields-extra.txt that gpumon provides,
// with the fake's default H200 facts: nvidia-smi's bytes, csv and csv,noheader,nounits.
const std::vector<std::string> kExtraFields = {"pcie.link.gen.current",
                                               "pcie.link.gen.max",
                                               "pcie.link.gen.gpucurrent",
                                               "pcie.link.gen.gpumax",
                                               "pcie.link.width.current",
                                               "pcie.link.width.max",
                                               "compute_mode",
                                               "mig.mode.current",
                                               "mig.mode.pending",
                                               "vbios_version",
                                               "power.draw.average",
                                               "utilization.encoder",
                                               "utilization.decoder",
                                               "display_active",
                                               "inforom.img",
                                               "accounting.mode",
                                               "display_mode",
                                               "persistence_mode",
                                               "fan.speed"};

// The fake's defaults are the H200's, but for the power (it differs from one capture to the
// next) and the fan (the H200 has none; the fake has one by default).
constexpr const char* kH200Defaults = R"({
  "name": "query-h200-defaults", "description": "the fake's default H200",
  "devices": [{"name": "NVIDIA H200", "fields": {"power_average_mw": 78040},
               "unsupported": ["fan_speed_pct"]}]
})";

// Splits a CSV line at nvidia-smi's ", ".
std::vector<std::string> cells_of(const std::string& line) {
  std::vector<std::string> cells;
  std::size_t start = 0;
  for (std::size_t at; (at = line.find(", ", start)) != std::string::npos; start = at + 2) {
    cells.push_back(line.substr(start, at - start));
  }
  cells.push_back(line.substr(start));
  return cells;
}

std::string joined(const std::vector<std::string>& cells) {
  std::string out;
  for (const std::string& c : cells) out += (out.empty() ? "" : ", ") + c;
  return out;
}

TEST_F(FakeNvml, ExtraFieldsMatchTheCaptureByteForByte) {
  std::ifstream in(std::string(GPUMON_SOURCE_DIR) +
                   "/testdata/nvidia-smi/h200/modes/fields-extra.txt");
  std::string header_line, value_line;
  ASSERT_TRUE(std::getline(in, header_line) && std::getline(in, value_line));
  const auto headers = cells_of(header_line), values = cells_of(value_line);
  ASSERT_EQ(headers.size(), values.size());
  std::vector<std::string> want_headers, want_csv, want_nounits;
  for (const std::string& field : kExtraFields) {
    std::size_t i = 0;
    while (i < headers.size() && headers[i].substr(0, headers[i].find(" [")) != field) ++i;
    ASSERT_LT(i, headers.size()) << field;
    want_headers.push_back(headers[i]);
    want_csv.push_back(values[i]);
    const auto unit = headers[i].find(" [");
    const std::string suffix =
        unit == std::string::npos ? ""
                                  : " " + headers[i].substr(unit + 2, headers[i].size() - unit - 3);
    std::string bare = values[i];
    if (!suffix.empty() && bare.size() > suffix.size() &&
        bare.compare(bare.size() - suffix.size(), suffix.size(), suffix) == 0) {
      bare.resize(bare.size() - suffix.size());
    }
    want_nounits.push_back(bare);
  }
  play(kH200Defaults);
  std::string list;
  for (const std::string& f : kExtraFields) list += (list.empty() ? "" : ",") + f;
  Result r = query({"--query-gpu=" + list, "--format=csv"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, joined(want_headers) + "\n" + joined(want_csv) + "\n");
  r = query({"--query-gpu=" + list, "--format=csv,noheader,nounits"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, joined(want_nounits) + "\n");
}

// A GPU without MIG answers NOT_SUPPORTED: nvidia-smi prints [N/A] there, other facts print
// [Not Supported]; neither is ever 0 or "Disabled".
TEST_F(FakeNvml, UnsupportedExtraFieldsAreNotZero) {
  play(R"({"name": "query-no-mig", "description": "a GPU without MIG",
           "devices": [{"name": "NVIDIA GeForce RTX 4090",
                        "unsupported": ["mig_mode", "vbios_version", "compute_mode", "pcie_link",
                                        "pcie_link_gen", "pcie_link_width", "encoder_util_pct",
                                        "decoder_util_pct", "power_average_mw"]}]})");
  const Result r =
      query({"--query-gpu=mig.mode.current,mig.mode.pending,vbios_version,"
             "compute_mode,pcie.link.gen.max,pcie.link.gen.gpumax,"
             "pcie.link.width.max,pcie.link.gen.current,pcie.link.width.current,"
             "utilization.encoder,utilization.decoder,power.draw.average",
             "--format=csv,noheader"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out,
            "[N/A], [N/A], [Not Supported], [Not Supported], [Not Supported], [Not Supported], "
            "[Not Supported], [Not Supported], [Not Supported], [Not Supported], "
            "[Not Supported], [Not Supported]\n");
}

// The power limit range and the applications clocks, as -q shows them on the H200 (700 W
// default, 200-700 W; 1980/3201 MHz), and [Not Supported] on a GPU without them.
TEST_F(FakeNvml, PowerLimitRangeAndApplicationsClocks) {
  const std::string fields =
      "--query-gpu=power.default_limit,power.min_limit,power.max_limit,"
      "clocks.applications.graphics,clocks.applications.memory,"
      "clocks.default_applications.gr,clocks.default_applications.mem";
  play(kH200Defaults);
  Result r = query({fields, "--format=csv"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out,
            "power.default_limit [W], power.min_limit [W], power.max_limit [W], "
            "clocks.applications.graphics [MHz], clocks.applications.memory [MHz], "
            "clocks.default_applications.graphics [MHz], clocks.default_applications.memory "
            "[MHz]\n700.00 W, 200.00 W, 700.00 W, 1980 MHz, 3201 MHz, 1980 MHz, 3201 MHz\n");
  play(R"({"name": "query-no-limits", "description": "no power limits or applications clocks",
           "devices": [{"name": "NVIDIA GeForce RTX 4090",
                        "unsupported": ["power_limits", "applications_clocks"]}]})");
  r = query({fields, "--format=csv,noheader"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out,
            "[Not Supported], [Not Supported], [Not Supported], [Not Supported], "
            "[Not Supported], [Not Supported], [Not Supported]\n");
}

// The clock-event time counters count the time each reason's bit was set, in whole us as
// nvidia-smi prints them; a driver without the slowdown fields (269-271) answers those alone
// [Not Supported]. Scenario time stands at 30 s: the power cap held 0-10 s, SW thermal 8-22 s.
TEST_F(FakeNvml, ClockEventCountersAreTheTimeEachReasonHeld) {
  env_.set("GPUMON_FAKE_TIME_OFFSET_S", "30");
  env_.set("GPUMON_FAKE_TIME_SCALE", "0");
  const std::string fields =
      "--query-gpu=clocks_event_reasons_counters.sw_power_cap,"
      "clocks_event_reasons_counters.sync_boost,"
      "clocks_event_reasons_counters.sw_thermal_slowdown,"
      "clocks_event_reasons_counters.hw_thermal_slowdown,"
      "clocks_event_reasons_counters.hw_power_brake_slowdown";
  play(R"({"name": "query-counters", "description": "power cap, then SW thermal",
           "devices": [{"fields": {"clock_event_reasons": {"points": {"values":
             [[0, 4], [8, 36], [10, 32], [22, 0]]}}}},
                       {"unsupported": ["slowdown_time"]}]})");
  Result r = query({fields, "--format=csv"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out,
            "clocks_event_reasons_counters.sw_power_cap [us], "
            "clocks_event_reasons_counters.sync_boost [us], "
            "clocks_event_reasons_counters.sw_thermal_slowdown [us], "
            "clocks_event_reasons_counters.hw_thermal_slowdown [us], "
            "clocks_event_reasons_counters.hw_power_brake_slowdown [us]\n"
            "10000000 us, 0 us, 14000000 us, 0 us, 0 us\n"
            "0 us, 0 us, [Not Supported], [Not Supported], [Not Supported]\n");
  r = query({"-q", "-d", "PERFORMANCE", "-i", "0"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("    Clocks Event Reasons Counters\n"
                       "        SW Power Capping                               : 10000000 us\n"
                       "        Sync Boost                                     : 0 us\n"
                       "        SW Thermal Slowdown                            : 14000000 us\n"
                       "        HW Thermal Slowdown                            : 0 us\n"
                       "        HW Power Braking                               : 0 us\n"),
            std::string::npos)
      << r.out;
}

// The T.Limit margin follows the temperature (87 C minus it: 52 at 35 C, -3 at 90 C, printed
// signed), the thresholds are the H200's, BAR1 its 256 GiB with 1 MiB used; a GPU without them
// says so, never 0.
TEST_F(FakeNvml, TheBoardsIdentityAsNvidiaSmiShowsIt) {
  play(R"({"name": "query-board", "description": "an A100 in a VM, an H200 without GSP",
           "devices": [{"brand": 14, "architecture": 7, "board_id": 6912, "module_id": 0,
                        "multi_gpu_board": true, "board_part_number": "699-2G506-0202-200",
                        "virtualization_mode": 1, "addressing_mode": 1,
                        "pci_subsystem_id": "0x146F10DE", "inforom_power_version": "N/A-free",
                        "accounting_buffer_size": 250},
                       {"unsupported": ["gsp_firmware", "board_identity", "pci_class"]},
                       {"gsp_firmware_version": "",
                        "errors": [{"call": "nvmlDeviceGetInforomVersion",
                                    "error": "UNKNOWN"}]}]})");
  Result r =
      query({"--query-gpu=pci.sub_device_id,pci.baseClass,pci.subClass,"
             "accounting.buffer_size,inforom.oem,inforom.pwr,addressing_mode,"
             "platform.module_id",
             "--format=csv,noheader"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out,
            "0x146F10DE, 0x3, 0x2, 250, 2.1, N/A-free, HMM, 0\n"
            "0x18BF10DE, [N/A], [N/A], 4000, 2.1, [N/A], None, [N/A]\n"
            "0x18BF10DE, 0x3, 0x2, 4000, [Unknown Error], [Unknown Error], None, 1\n");
  r = query({"-q", "-i", "0"});
  ASSERT_EQ(r.rc, 0) << r.err;
  for (const char* line : {"    Product Brand                                      : NVIDIA\n",
                           "    Product Architecture                               : Ampere\n",
                           "    Addressing Mode                                    : HMM\n",
                           "    MultiGPU Board                                     : Yes\n",
                           "    Board ID                                           : 0x1b00\n",
                           "    Board Part Number                                  : "
                           "699-2G506-0202-200\n",
                           "        Virtualization Mode                            : "
                           "Pass-Through\n",
                           "    GSP Firmware Version                               : 580.159.04\n",
                           "        Sub System Id                                  : 0x146F10DE\n"})
    EXPECT_NE(r.out.find(line), std::string::npos) << line << r.out;
  r = query({"-q", "-i", "1"});
  ASSERT_EQ(r.rc, 0) << r.err;
  for (const char* line : {"    Product Brand                                      : N/A\n",
                           "    Board Part Number                                  : N/A\n",
                           "    GSP Firmware Version                               : N/A\n",
                           "        Base Classcode                                 : N/A\n"})
    EXPECT_NE(r.out.find(line), std::string::npos) << line << r.out;
}

TEST_F(FakeNvml, TlimitMarginThresholdsAndBar1) {
  play(R"({"name": "query-tlimit", "description": "idle, then past T.Limit",
           "devices": [{"fields": {"temperature_gpu_c": 35}},
                       {"fields": {"temperature_gpu_c": 90}},
                       {"unsupported": ["temperature_limits", "bar1_memory"]},
                       {"errors": [{"field": "temperature_limits", "error": "INVALID_ARGUMENT"}]}]})");
  Result r = query({"--query-gpu=temperature.gpu.tlimit", "--format=csv"});
  ASSERT_EQ(r.rc, 0) << r.err;
  // GPU 3: the rule fails the margin getter too, where INVALID_ARGUMENT is a real error.
  EXPECT_EQ(r.out, "temperature.gpu.tlimit\n52\n-3\n[Not Supported]\n[Unknown Error]\n");
  r = query({"--query-gpu=temperature.gpu.tlimit", "--format=json", "-i", "1"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("-3"), std::string::npos) << "a signed number: " << r.out;
  r = query({"-q", "-d", "TEMPERATURE,MEMORY", "-i", "0"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("        GPU T.Limit Temp                               : 52 C\n"
                       "        GPU Shutdown T.Limit Temp                      : -8 C\n"
                       "        GPU Slowdown T.Limit Temp                      : -2 C\n"
                       "        GPU Max Operating T.Limit Temp                 : 0 C\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("        Memory Max Operating T.Limit Temp              : 0 C\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("    BAR1 Memory Usage\n"
                       "        Total                                          : 262144 MiB\n"
                       "        Used                                           : 1 MiB\n"
                       "        Free                                           : 262143 MiB\n"),
            std::string::npos)
      << r.out;
  // A driver that does not know the threshold field ids answers INVALID_ARGUMENT in each
  // field's own status: not supported, as nvidia-smi says, not an error.
  r = query({"-q", "-d", "TEMPERATURE", "-i", "3"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("        GPU Shutdown T.Limit Temp                      : Not Supported\n"
                       "        GPU Slowdown T.Limit Temp                      : Not Supported\n"),
            std::string::npos)
      << r.out;
  r = query({"-q", "-d", "TEMPERATURE,MEMORY", "-i", "2"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("        GPU T.Limit Temp                               : Not Supported\n"
                       "        GPU Shutdown T.Limit Temp                      : Not Supported\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("        Total                                          : Not Supported\n"
                       "        Used                                           : Not Supported\n"
                       "        Free                                           : Not Supported\n"),
            std::string::npos)
      << r.out;
}

// What only -q shows comes from the calls nvidia-smi makes for it: an H200's answers, a
// recovery action and C2C read as nvidia-smi words them, N/A where the GPU has no such thing,
// and a refused SRAM status (NVML documents it as root only) said so without hiding the DRAM
// counts.
TEST_F(FakeNvml, WhatOnlyTheReportShowsIsReadFromTheDriver) {
  play(
      R"({"name": "query-report-details", "description": "H200, GH200-like, none, SRAM status refused",
           "devices": [{},
                       {"recovery_action": 2, "c2c_enabled": true, "memory_power_mw": 41250},
                       {"unsupported": ["report_details"]},
                       {"errors": [{"call": "nvmlDeviceGetSramEccErrorStatus",
                                    "error": "NO_PERMISSION"}]}]})");
  auto lines_of = [&](const std::string& gpu) {
    Result r = query({"-q", "-i", gpu});
    EXPECT_EQ(r.rc, 0) << r.err;
    return r.out;
  };
  auto expect_lines = [](const std::string& out, std::initializer_list<const char*> lines) {
    for (const char* line : lines) EXPECT_NE(out.find(line), std::string::npos) << line << out;
  };
  expect_lines(lines_of("0"),
               {"    GPU C2C Mode                                       : Disabled\n",
                "    GPU Recovery Action                                : None\n",
                "        Replay Number Rollovers                        : 0\n",
                "    Encoder Stats\n"
                "        Active Sessions                                : 0\n"
                "        Average FPS                                    : 0\n"
                "        Average Latency                                : 0\n",
                "            DRAM Uncorrectable                         : 0\n"
                "            SRAM Threshold Exceeded                    : No\n",
                "        Unrepairable Memory                            : No\n",
                "        Inactive Uncorrectable Error                   : 0\n",
                "            Max                                        : 3072 bank(s)\n"
                "            High                                       : 0 bank(s)\n",
                "    GPU Memory Power Readings \n"
                "        Average Power Draw                             : 39.24 W\n"
                "        Instantaneous Power Draw                       : N/A\n",
                "        Video                                          : 765 MHz\n",
                "        Video                                          : 1545 MHz\n"
                "    Max Customer Boost Clocks\n"
                "        Graphics                                       : 1980 MHz\n",
                "        EGM                                            : disabled\n"});
  expect_lines(lines_of("1"),
               {"    GPU C2C Mode                                       : Enabled\n",
                "    GPU Recovery Action                                : Reboot\n",
                "        Average Power Draw                             : 41.25 W\n"});
  const std::string none = lines_of("2");
  expect_lines(none, {"    GPU C2C Mode                                       : N/A\n",
                      "    GPU Recovery Action                                : N/A\n",
                      "            SRAM L2                                    : N/A\n",
                      "            Max                                        : N/A\n",
                      "        Video                                          : N/A\n",
                      "        EGM                                            : N/A\n"});
  EXPECT_EQ(none.find("Not Supported"), std::string::npos) << none;
  expect_lines(
      lines_of("3"),
      {"            SRAM Correctable                           : 0\n"
       "            SRAM Uncorrectable Parity                  : Insufficient Permissions\n"
       "            SRAM Uncorrectable SEC-DED                 : Insufficient Permissions\n"
       "            DRAM Correctable                           : 0\n",
       "            SRAM Threshold Exceeded                    : Insufficient Permissions\n"});
}

TEST_F(FakeNvml, JsonIsFlaggedSimulated) {
  play(kH200);
  const Result r =
      query({"--query-gpu=uuid,memory.reserved", "--format=jsonl-flat", "-i", "00:06.0"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("\"simulated\":\"query-h200\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"uuid\":\"GPU-5ca1ab1e-0000-4000-8000-000000000000\","
                       "\"memory.reserved\":644939776"),
            std::string::npos)
      << r.out;
}

TEST_F(FakeNvml, OnlyTheNeededNvmlCallsAreMade) {
  play(kH200);
  void* lib = dlopen(kFakeLibrary.c_str(), RTLD_NOW | RTLD_LOCAL);  // keeps one instance loaded
  ASSERT_NE(lib, nullptr);
  auto count =
      reinterpret_cast<unsigned long long (*)(const char*)>(dlsym(lib, "gpumonFakeCallCount"));
  auto reset = reinterpret_cast<void (*)()>(dlsym(lib, "gpumonFakeResetCounts"));
  ASSERT_TRUE(count != nullptr && reset != nullptr);
  reset();
  ASSERT_EQ(query({"--query-gpu=index,name,memory.total"}).rc, 0);
  EXPECT_EQ(count("nvmlDeviceGetPowerUsage"), 0U);
  EXPECT_EQ(count("nvmlDeviceGetUtilizationRates"), 0U);
  EXPECT_EQ(count("nvmlDeviceGetTotalEnergyConsumption"), 0U);
  EXPECT_EQ(count("nvmlDeviceGetCurrPcieLinkGeneration"), 0U);
  EXPECT_EQ(count("nvmlDeviceGetEncoderUtilization"), 0U);
  EXPECT_EQ(count("nvmlDeviceGetFieldValues"), 0U);
  reset();
  ASSERT_EQ(query({"--query-gpu=utilization.encoder,pcie.link.width.current"}).rc, 0);
  EXPECT_EQ(count("nvmlDeviceGetEncoderUtilization"), 1U);
  EXPECT_EQ(count("nvmlDeviceGetCurrPcieLinkWidth"), 1U);
  EXPECT_EQ(count("nvmlDeviceGetDecoderUtilization"), 0U);
  EXPECT_EQ(count("nvmlDeviceGetCurrPcieLinkGeneration"), 0U);
  reset();
  ASSERT_EQ(query({"--query-gpu=power.draw", "-lms", "1", "-c", "3"}).rc, 0);
  EXPECT_EQ(count("nvmlDeviceGetPowerUsage"), 3U);
  EXPECT_EQ(count("nvmlDeviceGetTotalEnergyConsumption"), 0U);
  dlclose(lib);
}

TEST_F(FakeNvml, LostGpuRowsWhileTheOtherContinues) {
  play(kLost);
  // Scenario time stands at 4.7 s and moves only with the loop's own (manual) clock, so the
  // rows are at 4.7, 5.0 and 5.3 s however slowly the machine runs them.
  env_.set("GPUMON_FAKE_TIME_OFFSET_S", "4.7");
  env_.set("GPUMON_FAKE_TIME_SCALE", "0");
  void* lib = dlopen(kFakeLibrary.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr);
  const auto set_time = reinterpret_cast<void (*)(double)>(dlsym(lib, "gpumonFakeSetTime"));
  ASSERT_NE(set_time, nullptr);
  testing::ManualClock clock;
  clock.on_sleep = [&](testing::ManualClock& c) {
    set_time(4.7 + std::chrono::duration<double>(c.time.time_since_epoch()).count());
  };
  detail::QueryEnvironment env = detail::nvml_environment();
  env.clock = &clock;
  std::ostringstream out_text, err_text;
  const int rc = detail::run_query_command({"--query-gpu=index,utilization.gpu,power.draw",
                                            "--format=csv,noheader", "-lms", "300", "-c", "3"},
                                           out_text, err_text, env);
  dlclose(lib);
  const Result r{rc, out_text.str(), err_text.str()};
  ASSERT_EQ(r.rc, 0) << r.err;
  const auto out = lines(r.out);
  ASSERT_EQ(out.size(), 6U) << r.out;
  EXPECT_EQ(out[1].find("[GPU is lost]"), std::string::npos) << out[1];  // at 4.7 s
  EXPECT_EQ(out[5], "1, [GPU is lost], [GPU is lost]");                  // at 5.3 s
  EXPECT_EQ(out[4].rfind("0, ", 0), 0U);
  EXPECT_EQ(out[4].find("[GPU is lost]"), std::string::npos);
}

TEST_F(FakeNvml, ComputeApps) {
  play(kH200);
  const Result r = query({"--query-compute-apps=pid,process_name,gpu_bus_id,used_memory",
                          "--format=csv,noheader,nounits"});
  ASSERT_EQ(r.rc, 0) << r.err;
  // 96100000000 bytes = 91648.4 MiB, shown rounded up as nvidia-smi does.
  EXPECT_EQ(r.out, "848, python3, 00000000:00:06.0, 91649\n");
}

TEST_F(FakeNvml, NoDriverIsOneActionableLine) {
  env_.set("GPUMON_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1");
  Result r = query({"--query-gpu=index"});
  EXPECT_EQ(r.rc, 9) << "nvidia-smi's 'driver not loaded'";
  EXPECT_EQ(r.err.rfind("gpumon: cannot load NVML", 0), 0U) << r.err;
  EXPECT_NE(r.err.find("GPUMON_NVML_LIBRARY"), std::string::npos);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1);
  EXPECT_EQ(r.out, "");

  env_.set("GPUMON_NVML_LIBRARY", kFakeLibrary);
  play(kNoDriver);
  r = query({"--query-gpu=index"});
  EXPECT_EQ(r.rc, 9);
  EXPECT_EQ(r.err.rfind("gpumon: NVML initialisation failed", 0), 0U) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1);
}

}  // namespace
}  // namespace gpumon::query
