// SPDX-License-Identifier: MIT
// The exporter over the real sampler, loader and backend on gpumon's fake NVML, with the
// bodies checked by their real consumers: `promtool check metrics` and prometheus_client.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "exporter/exporter_state.h"
#include "exporter/testing/exposition_check.h"
#include "fake_nvml/fake_test_env.h"
#include "gpu/testing/open_fake_backend.h"
#include "util/testing/eventually.h"

namespace gpumon::exporter {
namespace {

using fake::testing::FakeScenario;
using fake::testing::Hooks;
using fake::testing::kTimeStandsStill;
using nlohmann::json;
using std::chrono::milliseconds;

bool has(const std::string& body, const std::string& text) {
  return body.find(text) != std::string::npos;
}

// The exporter's state over a sampler in real time, from construction until stop(); a test waits
// for what it checks (until()), never for a guessed span.
struct ServeRun {
  std::unique_ptr<Sampler> sampler;
  std::shared_ptr<ExporterState> state;
  std::shared_ptr<ExporterState> native;  ///< the same options without --compat dcgm

  explicit ServeRun(const ExporterOptions& options) {
    auto backend = gpumon::testing::open_fake_backend();
    if (!backend) return;
    SamplerConfig config;
    config.interval = milliseconds(50);
    config.host_process_details = false;  // the scenario's PIDs are not on this host
    sampler = std::make_unique<Sampler>(std::move(backend), config);
    state = std::make_shared<ExporterState>(*sampler, options);
    sampler->add_sink(state);
    ExporterOptions plain = options;
    plain.dcgm_compat = false;
    native = std::make_shared<ExporterState>(*sampler, plain);
    sampler->add_sink(native);
    sampler->start();
  }
  /// Waits until `done` holds; false when it never did.
  static bool until(const std::function<bool()>& done) { return testing_util::eventually(done); }
  bool until_ticks(std::uint64_t n) {
    return until([&] { return sampler->stats().ticks >= n; });
  }
  bool until_body_has(const std::string& text) {
    return until([&] { return has(*state->metrics_text(), text); });
  }
  void stop() { sampler->stop(); }
};

ExporterOptions options(bool dcgm, bool uuid) {
  ExporterOptions o;
  o.dcgm_compat = dcgm;
  o.show_uuid = uuid;
  o.hostname = "gpu-node-1";
  o.version = "0.1.0";
  o.revision = "test";
  return o;
}

// promtool's lint remarks, less those dcgm-exporter's own names draw: `modelName`, `Hostname`
// and `UUID` are camelCase, its counters have no `_total` (and one is named ..._COUNTER), and
// dashboards and alerts need them so.
std::string promtool_remarks(const std::string& body) {
  const auto r = testing::promtool_check(body);
  std::string left;
  std::size_t start = 0;
  while (start < r.output.size()) {
    const std::size_t end = std::min(r.output.find('\n', start), r.output.size());
    const std::string line = r.output.substr(start, end - start);
    start = end + 1;
    const bool dcgm_naming =
        line.starts_with("DCGM_FI_") &&
        (line.ends_with(" label names should be written in 'snake_case' not 'camelCase'") ||
         line.ends_with(" counter metrics should have \"_total\" suffix") ||
         line.ends_with(" metric name should not include type 'counter'"));
    if (!dcgm_naming) left += line + "\n";
  }
  if (left.empty() && r.exit_code != 0 && r.exit_code != 3)
    left = "exit " + std::to_string(r.exit_code);
  return left;
}

// promtool must say nothing (exit 0) on the native body and nothing but the DCGM label remark
// on the `--compat dcgm` one; the Python parser must read every family.
json check_with_real_consumers(const std::string& body, bool dcgm) {
  // GPUMON_EXPORTER_DUMP_DIR=/tmp/x keeps every checked body there, to look at.
  if (const char* dir = std::getenv("GPUMON_EXPORTER_DUMP_DIR")) {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::ofstream(std::string(dir) + "/" + info->name() + (dcgm ? "-dcgm" : "-native") + ".prom")
        << body;
  }
  if (testing::have_promtool()) {
    if (dcgm) {
      EXPECT_EQ(promtool_remarks(body), "");
    } else {
      const auto r = testing::promtool_check(body);
      EXPECT_EQ(r.exit_code, 0) << r.output;
      EXPECT_EQ(r.output, "");
    }
  } else {
    ADD_FAILURE() << "promtool missing: apt-get install prometheus (scripts/setup.sh)";
  }
  const auto py = testing::python_with_client();
  if (!py) {
    ADD_FAILURE() << "prometheus_client missing: apt-get install python3-prometheus-client";
    return json();
  }
  const auto r = testing::python_parse(*py, body);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return r.exit_code == 0 ? json::parse(r.output) : json();
}

void add_events_and_hostile_processes(ExporterState& state) {
  GpuEvent xid;
  xid.gpu = 0;
  xid.value = 79;
  xid.wall_time = WallClock::now();
  state.on_event(xid);
  xid.kind = GpuEvent::Kind::kEccSingleBit;
  state.on_event(xid);
  ProcessSnapshot snap;
  snap.gpu = 0;
  for (const char* name : {"/bin/q\"uote", "/bin/back\\slash", "/bin/new\nline", "\xFF\xFE"}) {
    GpuProcess p;
    p.pid = static_cast<unsigned>(100 + snap.processes.size());
    p.name = std::string(name);
    p.used_memory_bytes = std::uint64_t{1} << 20;
    snap.processes.push_back(p);
  }
  state.on_processes(snap);
}

TEST(ExporterFakeNvml, DemoPassesPromtoolAndTheParserNativeAndDcgm) {
  if (!testing::have_promtool()) GTEST_SKIP() << "promtool not installed";
  FakeScenario env("demo");
  ServeRun run(options(true, false));
  ASSERT_TRUE(run.state);
  ASSERT_TRUE(run.until_ticks(3));
  run.stop();
  add_events_and_hostile_processes(*run.state);
  const std::string body = *run.state->metrics_text();
  // The native body alone: promtool says nothing at all.
  add_events_and_hostile_processes(*run.native);
  check_with_real_consumers(*run.native->metrics_text(), false);
  const json parsed = check_with_real_consumers(body, true);
  ASSERT_TRUE(parsed.is_object());
  const json& f = parsed["families"];
  EXPECT_EQ(f["gpumon_gpu_info"]["samples"].size(), 8U);
  EXPECT_EQ(f["gpumon_gpu_utilization_ratio"]["samples"].size(), 8U);
  for (const json& s : f["gpumon_gpu_utilization_ratio"]["samples"]) {
    EXPECT_GE(s[2].get<double>(), 0.0);
    EXPECT_LE(s[2].get<double>(), 1.0);
  }
  EXPECT_EQ(f["gpumon_gpu_energy_joules"]["type"], "counter");  // the parser drops _total
  EXPECT_EQ(f["gpumon_gpu_sm_clock_max_hertz"]["samples"][0][2], 1.98e9);
  EXPECT_EQ(f["DCGM_FI_DEV_GPU_UTIL"]["samples"].size(), 8U);
  const json& labels = f["DCGM_FI_DEV_GPU_TEMP"]["samples"][3][1];
  EXPECT_EQ(labels["gpu"], "3");
  EXPECT_EQ(labels["device"], "nvidia3");
  EXPECT_EQ(labels["modelName"], "NVIDIA H200");
  EXPECT_EQ(labels["hostname"], "gpu-node-1");
  EXPECT_EQ(labels["Hostname"], "gpu-node-1");
  EXPECT_FALSE(labels.contains("UUID"));
  EXPECT_EQ(labels["DCGM_FI_DRIVER_VERSION"], "580.159.04");
  // Every default counter of dcgm-exporter that NVML gives, with its type and unit.
  EXPECT_EQ(f["DCGM_FI_DEV_FB_RESERVED"]["samples"].size(), 8U);
  EXPECT_EQ(f["DCGM_FI_DEV_FB_RESERVED"]["samples"][0][2], 615);  // whole MiB
  EXPECT_EQ(f["DCGM_FI_DEV_ENC_UTIL"]["samples"].size(), 8U);
  EXPECT_EQ(f["DCGM_FI_DEV_DEC_UTIL"]["samples"].size(), 8U);
  EXPECT_EQ(f["DCGM_FI_DEV_PCIE_REPLAY_COUNTER"]["samples"].size(), 8U);
  EXPECT_EQ(f["DCGM_FI_DEV_PCIE_REPLAY_COUNTER"]["type"], "counter");
  EXPECT_EQ(f["DCGM_FI_DEV_ROW_REMAP_FAILURE"]["samples"].size(), 8U);
  EXPECT_EQ(f["DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS"]["samples"].size(), 8U);
  EXPECT_EQ(f["DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS"]["samples"][3][2], 1);
  EXPECT_EQ(f["DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS"]["samples"][2][2], 0);
  // DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL is a rate from two NVLink reads a second apart, which
  // these three quick ticks do not make: ExporterState.DcgmNvlinkBandwidthIsDcgmsRate... and
  // the Prometheus e2e test (gpumon_serve_dcgm_e2e) check it.
  EXPECT_EQ(f["DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"]["type"], "counter");
  EXPECT_EQ(f["gpumon_gpu_nvlink_tx_bytes"]["type"], "counter");
  EXPECT_EQ(f["gpumon_gpu_remapped_rows_correctable"]["samples"][3][2], 1);
  // The XID: its code and meaning as labels; 0 with "No Error" on a GPU that had none.
  for (const json& s : f["DCGM_FI_DEV_XID_ERRORS"]["samples"]) {
    const bool had = s[1]["gpu"] == "0";
    EXPECT_EQ(s[2], had ? 79 : 0);
    EXPECT_EQ(s[1]["err_code"], had ? "79" : "0");
    EXPECT_EQ(s[1]["err_msg"], had ? "GPU has fallen off the bus" : "No Error");
  }
  EXPECT_EQ(f["DCGM_FI_DEV_XID_ERRORS"]["samples"].size(), 8U);
  EXPECT_EQ(f["gpumon_gpu_xid_errors"]["samples"][0][1]["xid"], "79");
  EXPECT_EQ(f["gpumon_gpu_xid_errors"]["samples"][0][1]["class"], "hardware");
  // GPU 5 throttles for part of every minute; at the start it does not.
  bool saw_thermal = false;
  for (const json& s : f["gpumon_gpu_clock_event_active"]["samples"]) {
    if (s[1]["reason"] == "sw_thermal_slowdown") saw_thermal = true;
  }
  EXPECT_TRUE(saw_thermal);
  // The time each reason held the clocks: one counter family, the reasons as labels.
  const json& held = f["gpumon_gpu_clock_event_seconds"];  // the parser drops _total
  EXPECT_EQ(held["type"], "counter");
  EXPECT_EQ(held["samples"].size(), 8U * 5U);
  std::set<std::string> reasons;
  for (const json& s : held["samples"]) {
    reasons.insert(s[1]["reason"].get<std::string>());
    EXPECT_GE(s[2].get<double>(), 0.0);
  }
  EXPECT_EQ(reasons, (std::set<std::string>{"sw_power_cap", "sync_boost", "sw_thermal_slowdown",
                                            "hw_thermal_slowdown", "hw_power_brake_slowdown"}));
  EXPECT_EQ(f["DCGM_FI_DEV_POWER_VIOLATION"]["type"], "counter");
  EXPECT_EQ(f["DCGM_FI_DEV_POWER_VIOLATION"]["samples"].size(), 8U);
  EXPECT_EQ(f["DCGM_FI_DEV_SYNC_BOOST_VIOLATION"]["samples"].size(), 8U);
  // Serials never; UUIDs not without the option.
  EXPECT_FALSE(has(body, "16549230")) << "a serial number leaked";
  EXPECT_FALSE(has(body, "GPU-5e1f7c2a"));
  const json devices = json::parse(run.state->devices_json());
  EXPECT_EQ(devices["system"]["hostname"], "gpu-node-1");
  EXPECT_EQ(devices["system"]["cuda_version"], "13.0");
  const std::string current = run.state->current_json() + run.state->devices_json();
  EXPECT_FALSE(has(current, "16549230"));
  EXPECT_FALSE(has(current, "GPU-5e1f7c2a"));
}

TEST(ExporterFakeNvml, UuidOnlyWithTheOption) {
  FakeScenario env("demo");
  ServeRun run(options(true, true));
  ASSERT_TRUE(run.state);
  ASSERT_TRUE(run.until_ticks(2));
  run.stop();
  const std::string body = *run.state->metrics_text();
  EXPECT_TRUE(has(body, ",uuid=\"GPU-5e1f7c2a-9b3d-4c8e-a1f0-6d2b8e4c0000\"} 1\n")) << body;
  EXPECT_TRUE(has(body, "UUID=\"GPU-5e1f7c2a-9b3d-4c8e-a1f0-6d2b8e4c0007\""));
  EXPECT_TRUE(has(run.state->devices_json(), "GPU-5e1f7c2a-9b3d-4c8e-a1f0-6d2b8e4c0001"));
  EXPECT_FALSE(has(body, "16549230"));
  if (testing::have_promtool()) {
    check_with_real_consumers(body, true);
    check_with_real_consumers(*run.native->metrics_text(), false);
  }
}

TEST(ExporterFakeNvml, UnsupportedValuesProduceNoSeries) {
  FakeScenario env("unsupported");
  ServeRun run(options(true, false));
  ASSERT_TRUE(run.state);
  ASSERT_TRUE(run.until_ticks(3));
  run.stop();
  const std::string body = *run.state->metrics_text();
  for (const char* absent :
       {"gpumon_gpu_memory_temperature_celsius", "gpumon_gpu_energy_joules_total",
        "gpumon_gpu_ecc_corrected_errors_total", "gpumon_gpu_power_watts",
        "gpumon_gpu_power_instant_watts", "DCGM_FI_DEV_POWER_USAGE",
        "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "DCGM_FI_DEV_MEMORY_TEMP",
        "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "gpumon_gpu_sm_active_ratio",
        "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS",
        "DCGM_FI_DEV_ROW_REMAP_FAILURE", "gpumon_gpu_nvlink_tx_bytes_total",
        "gpumon_gpu_row_remap_failed", "gpumon_gpu_graphics_engine_active_ratio",
        "DCGM_FI_PROF_GR_ENGINE_ACTIVE"}) {
    EXPECT_FALSE(has(body, absent)) << absent << " in\n" << body;
  }
  EXPECT_TRUE(has(body, "DCGM_FI_DEV_PCIE_REPLAY_COUNTER{gpu=\"0\","));
  EXPECT_TRUE(has(body, "err_code=\"0\",err_msg=\"No Error\"} 0\n"));
  EXPECT_TRUE(has(body, "gpumon_gpu_fan_speed_ratio{gpu=\"0\"} 0."));
  EXPECT_TRUE(has(body, "gpumon_gpu_temperature_celsius{gpu=\"0\"} "));
  EXPECT_TRUE(has(body, "gpumon_gpu_power_limit_watts{gpu=\"0\"} 450\n"));
  // The driver has the power-cap time but not the sync-boost time or the slowdown counters:
  // only those are absent.
  EXPECT_TRUE(
      has(body, "gpumon_gpu_clock_event_seconds_total{gpu=\"0\",reason=\"sw_power_cap\"} 0\n"));
  EXPECT_FALSE(has(body, "seconds_total{gpu=\"0\",reason=\"hw_thermal_slowdown\"}"));
  EXPECT_FALSE(has(body, "seconds_total{gpu=\"0\",reason=\"sync_boost\"}"));
  EXPECT_TRUE(
      has(body, "gpumon_gpu_process_memory_bytes{gpu=\"0\",pid=\"7311\",process=\"python3\"}"));
  const json current = json::parse(run.state->current_json());
  const json& m = current["gpus"][0]["metrics"];
  EXPECT_TRUE(m["power_draw_w"].is_null());
  EXPECT_TRUE(m["energy_j"].is_null());
  EXPECT_TRUE(m["temperature_memory_c"].is_null());
  EXPECT_FALSE(m["temperature_gpu_c"].is_null());
  if (testing::have_promtool()) {
    check_with_real_consumers(body, true);
    check_with_real_consumers(*run.native->metrics_text(), false);
  }
}

TEST(ExporterFakeNvml, LostGpuIsFlaggedAndTheOtherStays) {
  FakeScenario env("gpu-lost", /*offset_s=*/4.9, kTimeStandsStill);  // GPU 1 is lost at 5 s
  ServeRun run(options(true, false));
  ASSERT_TRUE(run.state);
  ASSERT_TRUE(run.until_ticks(1));
  Hooks::get().set_time(5.1);
  ASSERT_TRUE(run.until_body_has("gpumon_gpu_lost{gpu=\"1\"} 1\n"));
  run.stop();
  const std::string body = *run.state->metrics_text();
  EXPECT_TRUE(has(body, "gpumon_gpu_lost{gpu=\"1\"} 1\n")) << body;
  EXPECT_TRUE(has(body, "gpumon_gpu_lost{gpu=\"0\"} 0\n"));
  EXPECT_FALSE(has(body, "gpumon_gpu_utilization_ratio{gpu=\"1\"}"));
  EXPECT_TRUE(has(body, "gpumon_gpu_utilization_ratio{gpu=\"0\"}"));
  EXPECT_FALSE(has(body, "DCGM_FI_DEV_GPU_UTIL{gpu=\"1\""));
  EXPECT_TRUE(has(body, "gpumon_up 1\n"));
  if (testing::have_promtool()) {
    check_with_real_consumers(body, true);
    check_with_real_consumers(*run.native->metrics_text(), false);
  }
}

TEST(ExporterFakeNvml, XidEventsOfTheScenarioAreCounted) {
  FakeScenario env("xid", /*offset_s=*/2.9, kTimeStandsStill);  // GPU 0: XID 13 at 3 s
  ServeRun run(options(true, false));
  ASSERT_TRUE(run.state);
  ASSERT_TRUE(run.until_ticks(1));
  Hooks::get().set_time(3.1);
  const std::string xid13 =
      "gpumon_gpu_xid_errors_total{gpu=\"0\",xid=\"13\",class=\"application\"} 1\n";
  ASSERT_TRUE(run.until_body_has(xid13));
  run.stop();
  std::string body = *run.state->metrics_text();
  EXPECT_TRUE(has(body, xid13)) << body;
  EXPECT_TRUE(has(body, "gpumon_gpu_xid_last_timestamp_seconds{gpu=\"0\"} "));
  EXPECT_TRUE(has(body, "DCGM_FI_DEV_XID_ERRORS{gpu=\"0\","));
  EXPECT_FALSE(has(body, "gpumon_gpu_xid_errors_total{gpu=\"1\""));  // its XID is at 8 s
  add_events_and_hostile_processes(*run.state);
  body = *run.state->metrics_text();
  EXPECT_TRUE(has(body, "gpumon_gpu_xid_errors_total{gpu=\"0\",xid=\"79\",class=\"hardware\"} 1\n"))
      << body;
  EXPECT_TRUE(has(body, "DCGM_FI_DEV_XID_ERRORS{gpu=\"0\","));
  if (testing::have_promtool()) {
    check_with_real_consumers(body, true);
    check_with_real_consumers(*run.native->metrics_text(), false);
  }
}

TEST(ExporterFakeNvml, ScrapesFromManyThreadsWhileTheSamplerTicks) {
  FakeScenario env("demo");
  auto backend = gpumon::testing::open_fake_backend();
  ASSERT_TRUE(backend);
  SamplerConfig config;
  config.interval = milliseconds(10);
  config.host_process_details = false;
  Sampler sampler(std::move(backend), config);
  auto state = std::make_shared<ExporterState>(sampler, options(true, false));
  sampler.add_sink(state);
  sampler.start();
  std::atomic<bool> stop{false};
  std::atomic<int> bad{0};
  std::atomic<long> scrapes{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 4; ++r) {
    readers.emplace_back([&, r] {
      while (!stop) {
        const auto body = state->metrics_text();
        if (body->empty() || body->back() != '\n' || !has(*body, "gpumon_gpus 8\n")) ++bad;
        state->count_request(200);
        if (r == 0 && !json::parse(state->current_json()).contains("gpus")) ++bad;
        if (r == 1 && !json::parse(state->history_json(1, {"power_draw_w"})).contains("gpus"))
          ++bad;
        if (r == 2) (void)state->health();
        ++scrapes;
      }
    });
  }
  // Scrapes from every reader while the sampler ticks on (the cache turns over each tick).
  const auto ticks_before = sampler.stats().ticks;
  EXPECT_TRUE(testing_util::eventually(
      [&] { return scrapes >= 100 && sampler.stats().ticks >= ticks_before + 5; }));
  stop = true;
  for (auto& t : readers) t.join();
  sampler.stop();
  EXPECT_EQ(bad, 0);
  EXPECT_GT(scrapes, 4);
  // Every counted request shows once the cache has turned over.
  const std::string body = *state->metrics_text();
  EXPECT_TRUE(has(body, "gpumon_http_requests_total{code=\"200\"} ")) << body;
}

}  // namespace
}  // namespace gpumon::exporter
