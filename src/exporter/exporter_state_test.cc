// SPDX-License-Identifier: MIT
// ExporterState over synthetic ticks, events and process lists (a Sampler over the in-memory
// FakeBackend supplies the static facts; time is a FakeClock).
#include "exporter/exporter_state.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "exporter/renderers.h"
#include "exporter/testing/exposition_check.h"
#include "sampler/testing/fake_backend.h"
#include "sampler/testing/fake_clock.h"
#include "sampler/testing/fake_run.h"

namespace gpumon::exporter {
namespace {

using nlohmann::json;
using std::chrono::seconds;

bool has(const std::string& body, const std::string& text) {
  return body.find(text) != std::string::npos;
}

struct Fixture {
  std::shared_ptr<gpumon::testing::FakeClock> clock =
      std::make_shared<gpumon::testing::FakeClock>();
  std::unique_ptr<Sampler> sampler;
  std::shared_ptr<ExporterState> state;

  explicit Fixture(ExporterOptions options = {}, unsigned gpus = 2) {
    SamplerConfig config;  // 1 s interval: values go stale after 10 s, health after 8 s
    sampler = std::make_unique<Sampler>(std::make_unique<gpumon::testing::FakeBackend>(gpus, clock),
                                        config, clock);
    options.version = "1.2.3";
    options.revision = "abc";
    state = std::make_shared<ExporterState>(*sampler, options, clock);
  }

  /// A tick at the clock's time now with `samples`, after moving the clock by `advance`.
  void tick(MonoClock::duration advance, std::vector<DeviceSample> samples) {
    clock->advance(advance);
    TickSample t;
    t.mono_time = clock->now();
    t.wall_time = clock->wall_now();
    for (auto& s : samples) s.mono_time = t.mono_time;
    t.gpus = std::move(samples);
    state->on_tick(t);
  }
  std::string metrics() { return *state->metrics_text(); }
};

DeviceSample sample(unsigned gpu) {
  DeviceSample s;
  s.index = gpu;
  s.utilization_gpu_pct = 97U;
  s.memory_used_bytes = std::uint64_t{1} << 30;
  s.sm_clock_mhz = 1980U;
  return s;
}

TEST(ExporterState, WritesPresentValuesInBaseUnitsAndNoMissingOnes) {
  Fixture f;
  f.tick(seconds(0), {sample(0)});
  const std::string body = f.metrics();
  EXPECT_TRUE(has(body, "gpumon_gpu_utilization_ratio{gpu=\"0\"} 0.97\n")) << body;
  EXPECT_TRUE(has(body, "gpumon_gpu_memory_used_bytes{gpu=\"0\"} 1073741824\n"));
  EXPECT_TRUE(has(body, "gpumon_gpu_sm_clock_hertz{gpu=\"0\"} 1.98e+09\n"));
  EXPECT_TRUE(has(body, "gpumon_gpu_lost{gpu=\"0\"} 0\n"));
  // Never read: no series, not even a HELP line, and GPU 1 never appeared in a tick.
  EXPECT_FALSE(has(body, "gpumon_gpu_temperature_celsius"));
  EXPECT_FALSE(has(body, "gpumon_gpu_power_watts"));
  EXPECT_FALSE(has(body, "{gpu=\"1\"} 0.97"));
  EXPECT_TRUE(has(body, "gpumon_build_info{version=\"1.2.3\",revision=\"abc\"} 1\n"));
  EXPECT_TRUE(has(body, "gpumon_gpu_info{gpu=\"1\",name=\"Fake GPU\""));
  EXPECT_TRUE(has(body, "gpumon_up 1\n"));
  EXPECT_TRUE(has(body, "gpumon_simulated 1\n"));
  EXPECT_TRUE(has(body, "gpumon_gpus 2\n"));
  EXPECT_EQ(body.back(), '\n');

  const json current = json::parse(f.state->current_json());
  const json& m = current["gpus"][0]["metrics"];
  EXPECT_EQ(m.size(), kMetricCount + 1) << "the catalog and throttled";
  EXPECT_TRUE(m["throttled"].is_null()) << "no clock event reasons read";
  EXPECT_EQ(m["utilization_gpu_pct"], 97);
  EXPECT_TRUE(m["temperature_gpu_c"].is_null());
  EXPECT_TRUE(m["sm_active_ratio"].is_null());
  EXPECT_TRUE(current["gpus"][1]["metrics"]["utilization_gpu_pct"].is_null());
}

// At 64 GPUs the sampler stretches the process task's period (to ~26 s): a list is then held
// for 1.5 of the period it came at, not dropped 10 s after each read.
TEST(ExporterState, AProcessListIsHeldForItsStretchedPeriod) {
  Fixture f;
  ProcessSnapshot snap;
  snap.gpu = 0;
  GpuProcess p;
  p.pid = 42;
  p.used_memory_bytes = std::uint64_t{1} << 30;
  snap.processes = {p};
  auto listed = [&] {
    return !json::parse(f.state->current_json())["gpus"][0]["processes"].is_null();
  };
  f.tick(seconds(0), {sample(0)});
  f.state->on_processes(snap);
  f.tick(seconds(11), {sample(0)});
  EXPECT_FALSE(listed()) << "one list: held for the hold (10 s) alone";
  f.tick(seconds(15), {sample(0)});
  f.state->on_processes(snap);  // 26 s after the first: the period learned
  f.tick(seconds(19), {sample(0)});
  EXPECT_TRUE(listed()) << "19 s after a list that comes every 26 s";
  f.tick(seconds(21), {sample(0)});
  EXPECT_FALSE(listed()) << "40 s: past 1.5 periods";
  // An outage is not a period: a list 10 min later is held for the hold again.
  f.tick(seconds(600), {sample(0)});
  f.state->on_processes(snap);
  f.tick(seconds(11), {sample(0)});
  EXPECT_FALSE(listed());
}

TEST(ExporterState, KeepsTheLastKnownValueUntilItIsStale) {
  Fixture f;
  DeviceSample with_gpm = sample(0);
  with_gpm.sm_active_ratio = 0.625;
  with_gpm.gr_engine_active_ratio = 0.875;
  with_gpm.power_max_w = 650.5;
  f.tick(seconds(0), {with_gpm});
  f.tick(seconds(1), {sample(0)});  // GPM and driver buffers are not read every tick
  std::string body = f.metrics();
  EXPECT_TRUE(has(body, "gpumon_gpu_sm_active_ratio{gpu=\"0\"} 0.625\n")) << body;
  EXPECT_TRUE(has(body, "gpumon_gpu_power_max_watts{gpu=\"0\"} 650.5\n"));
  EXPECT_TRUE(has(body, "gpumon_gpu_graphics_engine_active_ratio{gpu=\"0\"} 0.875\n"));
  f.tick(seconds(9), {sample(0)});  // 10 s old: still the limit
  EXPECT_TRUE(has(f.metrics(), "gpumon_gpu_sm_active_ratio{gpu=\"0\"} 0.625\n"));
  f.tick(seconds(1), {sample(0)});  // 11 s: gone
  body = f.metrics();
  EXPECT_FALSE(has(body, "gpumon_gpu_sm_active_ratio")) << body;
  EXPECT_FALSE(has(body, "gpumon_gpu_power_max_watts"));
  EXPECT_TRUE(has(body, "gpumon_gpu_utilization_ratio{gpu=\"0\"} 0.97\n"));
}

TEST(ExporterState, ALostGpuKeepsOnlyItsLostFlag) {
  Fixture f;
  f.tick(seconds(0), {sample(0), sample(1)});
  DeviceSample lost;
  lost.index = 1;
  lost.lost = true;
  lost.utilization_gpu_pct = Reading<unsigned>::missing(Missing::kGpuLost);
  f.tick(seconds(1), {sample(0), lost});
  const std::string body = f.metrics();
  EXPECT_TRUE(has(body, "gpumon_gpu_lost{gpu=\"1\"} 1\n")) << body;
  EXPECT_TRUE(has(body, "gpumon_gpu_lost{gpu=\"0\"} 0\n"));
  EXPECT_FALSE(has(body, "gpumon_gpu_utilization_ratio{gpu=\"1\"}"));
  EXPECT_FALSE(has(body, "gpumon_gpu_memory_used_bytes{gpu=\"1\"}"));
  EXPECT_TRUE(json::parse(f.state->current_json())["gpus"][1]["lost"].get<bool>());
}

TEST(ExporterState, AStaleGpuSaysWhichCallHasNotReturnedAndDropsItsValues) {
  Fixture f;
  f.tick(seconds(0), {sample(0), sample(1)});
  DeviceSample stale;
  stale.index = 1;
  set_all_missing(stale, Missing::kStale);
  stale.stale = StaleCall{"nvmlDeviceGetTemperature", f.clock->now() - seconds(9)};
  f.tick(seconds(1), {sample(0), stale});  // the call started 10 s before this tick
  const std::string body = f.metrics();
  EXPECT_TRUE(has(body, "gpumon_gpu_stale{gpu=\"1\"} 1\n")) << body;
  EXPECT_TRUE(has(body, "gpumon_gpu_stale{gpu=\"0\"} 0\n"));
  EXPECT_TRUE(
      has(body, "gpumon_gpu_stale_call_seconds{gpu=\"1\",call=\"nvmlDeviceGetTemperature\"} 10\n"));
  EXPECT_FALSE(has(body, "gpumon_gpu_stale_call_seconds{gpu=\"0\""));
  EXPECT_TRUE(has(body, "gpumon_gpu_lost{gpu=\"1\"} 0\n"));  // stale is not lost
  EXPECT_FALSE(has(body, "gpumon_gpu_utilization_ratio{gpu=\"1\"}"));
  const json gpu = json::parse(f.state->current_json())["gpus"][1];
  EXPECT_EQ(gpu["stale"]["call"], "nvmlDeviceGetTemperature");
  EXPECT_EQ(gpu["stale"]["for_s"], 10.0);
  f.tick(seconds(1), {sample(0), sample(1)});  // the call returned
  EXPECT_TRUE(has(f.metrics(), "gpumon_gpu_stale{gpu=\"1\"} 0\n"));
  EXPECT_TRUE(json::parse(f.state->current_json())["gpus"][1]["stale"].is_null());
}

TEST(ExporterState, DcgmNvlinkBandwidthIsDcgmsRateInMBPerSecond) {
  ExporterOptions o;
  o.dcgm_compat = true;
  Fixture f(o);
  auto nvlink = [](double tx_kib, double rx_kib) {
    DeviceSample s = sample(0);
    s.nvlink_data_tx_kib = static_cast<std::uint64_t>(tx_kib);
    s.nvlink_data_rx_kib = static_cast<std::uint64_t>(rx_kib);
    return s;
  };
  f.tick(seconds(0), {nvlink(1e9, 2e9)});
  EXPECT_FALSE(has(f.metrics(), "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL{")) << "one read: no rate yet";
  // 3e6 KiB more in 2 s: 1.5e6 KiB/s, DCGM's 1500 "MB/s".
  f.tick(seconds(2), {nvlink(1e9 + 1e6, 2e9 + 2e6)});
  const std::string body = f.metrics();
  EXPECT_TRUE(has(body, "# TYPE DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL counter\n")) << body;
  EXPECT_TRUE(has(body, "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL{gpu=\"0\"")) << body;
  EXPECT_TRUE(has(body, "} 1500\n")) << body;
  f.tick(seconds(11), {sample(0)});  // the counters stop coming: the rate goes with them
  EXPECT_FALSE(has(f.metrics(), "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL{"));
}

TEST(ExporterState, CountsXidAndEccEvents) {
  ExporterOptions o;
  o.dcgm_compat = true;
  o.hostname = "node-7";
  Fixture f(o);
  f.tick(seconds(0), {sample(0), sample(1)});
  auto event = [&](unsigned gpu, GpuEvent::Kind kind, std::uint64_t value, int at_s) {
    GpuEvent e;
    e.gpu = gpu;
    e.kind = kind;
    e.value = value;
    e.wall_time = WallClock::time_point(seconds(at_s));
    f.state->on_event(e);
  };
  event(0, GpuEvent::Kind::kXid, 13, 1000);
  event(0, GpuEvent::Kind::kXid, 31, 1001);
  event(0, GpuEvent::Kind::kXid, 13, 1002);
  event(1, GpuEvent::Kind::kEccDoubleBit, 0, 1003);
  event(1, GpuEvent::Kind::kLost, 0, 1004);
  const std::string body = f.metrics();
  EXPECT_TRUE(
      has(body, "gpumon_gpu_xid_errors_total{gpu=\"0\",xid=\"13\",class=\"application\"} 2\n"))
      << body;
  EXPECT_TRUE(
      has(body, "gpumon_gpu_xid_errors_total{gpu=\"0\",xid=\"31\",class=\"application\"} 1\n"));
  EXPECT_TRUE(has(body, "gpumon_gpu_xid_last_timestamp_seconds{gpu=\"0\"} 1002\n"));
  EXPECT_FALSE(has(body, "gpumon_gpu_xid_last_timestamp_seconds{gpu=\"1\"}"));
  EXPECT_TRUE(has(body, "gpumon_gpu_ecc_events_total{gpu=\"1\",severity=\"double_bit\"} 1\n"));
  EXPECT_FALSE(has(body, "severity=\"single_bit\""));
  // DCGM: the last XID's value, with dcgm-exporter's labels; 0 with "No Error" before one.
  EXPECT_TRUE(has(body,
                  "DCGM_FI_DEV_XID_ERRORS{gpu=\"0\",modelName=\"Fake GPU\","
                  "Hostname=\"node-7\",hostname=\"node-7\",DCGM_FI_DRIVER_VERSION=\"580.0-fake\","
                  "err_code=\"13\",err_msg=\"Graphics Engine Exception\"} 13\n"))
      << body;
  EXPECT_TRUE(has(body,
                  "DCGM_FI_DEV_XID_ERRORS{gpu=\"1\",modelName=\"Fake GPU\","
                  "Hostname=\"node-7\",hostname=\"node-7\",DCGM_FI_DRIVER_VERSION="
                  "\"580.0-fake\",err_code=\"0\",err_msg=\"No Error\"} 0\n"));
  EXPECT_TRUE(has(body,
                  "DCGM_FI_DEV_GPU_UTIL{gpu=\"1\",modelName=\"Fake GPU\","
                  "Hostname=\"node-7\",hostname=\"node-7\",DCGM_FI_DRIVER_VERSION=\"580.0-fake\"} "
                  "97\n"));
  EXPECT_TRUE(has(body, "DCGM_FI_DEV_FB_USED{gpu=\"0\","));
  EXPECT_TRUE(has(body, "} 1024\n"));  // 1 GiB in MiB
  EXPECT_FALSE(has(body, "UUID="));
  const json current = json::parse(f.state->current_json());
  EXPECT_EQ(current["gpus"][0]["xid_counts"]["13"], 2);
  EXPECT_EQ(current["gpus"][0]["last_xid"], 13);  // the newest
}

// Two pods share GPU 0 (time-slicing), a Slurm job's two processes hold GPU 1, and a process of
// no known job: one series per GPU and job, the process series carry their job's labels.
TEST(ExporterState, JobsOnEachGpu) {
  Fixture f;
  f.tick(seconds(0), {sample(0), sample(1)});
  auto proc = [](unsigned pid, std::uint64_t mib, std::optional<unsigned> sm) {
    GpuProcess p;
    p.pid = pid;
    p.name = std::string("/usr/bin/python3");
    p.used_memory_bytes = mib << 20;
    if (sm) p.sm_util_pct = *sm;
    return p;
  };
  auto pod = [](GpuProcess p, std::string name) {
    p.job.pod = std::move(name);
    p.job.pod_namespace = "team-a";
    p.job.pod_uid = "1f2e3d4c-5b6a-7980-a1b2-c3d4e5f60718";
    p.job.container_id = "0123456789ab";
    return p;
  };
  auto slurm = [](GpuProcess p) {
    p.job.id = p.job.slurm_job_id = "4711";
    p.job.id_source = "slurm";
    return p;
  };
  ProcessSnapshot g0;
  g0.gpu = 0;
  g0.processes = {pod(proc(10, 1024, 30), "infer-a"), pod(proc(11, 2048, 45), "infer-b"),
                  pod(proc(12, 512, std::nullopt), "infer-b"), proc(13, 256, 5)};
  ProcessSnapshot g1;
  g1.gpu = 1;
  g1.processes = {slurm(proc(20, 4096, 60)), slurm(proc(21, 4096, std::nullopt))};
  f.state->on_processes(g0);
  f.state->on_processes(g1);
  const std::string body = f.metrics();
  EXPECT_TRUE(
      has(body, "gpumon_gpu_job_processes{gpu=\"0\",namespace=\"team-a\",pod=\"infer-a\"} 1\n"))
      << body;
  EXPECT_TRUE(
      has(body, "gpumon_gpu_job_processes{gpu=\"0\",namespace=\"team-a\",pod=\"infer-b\"} 2\n"));
  EXPECT_TRUE(has(body,
                  "gpumon_gpu_job_memory_bytes{gpu=\"0\",namespace=\"team-a\",pod=\"infer-b\"} "
                  "2684354560\n"));
  EXPECT_TRUE(has(body,
                  "gpumon_gpu_job_sm_utilization_ratio{gpu=\"0\",namespace=\"team-a\","
                  "pod=\"infer-b\"} 0.45\n"));
  EXPECT_TRUE(has(body, "gpumon_gpu_job_processes{gpu=\"1\",job_id=\"4711\"} 2\n"));
  EXPECT_TRUE(has(body, "gpumon_gpu_job_memory_bytes{gpu=\"1\",job_id=\"4711\"} 8589934592\n"));
  EXPECT_TRUE(has(body, "gpumon_gpu_job_sm_utilization_ratio{gpu=\"1\",job_id=\"4711\"} 0.6\n"));
  // The process of no known job is in the process series, not in a job's.
  EXPECT_TRUE(has(body,
                  "gpumon_gpu_process_memory_bytes{gpu=\"0\",pid=\"13\",process=\"python3\"} "
                  "268435456\n"));
  EXPECT_TRUE(has(body,
                  "gpumon_gpu_process_memory_bytes{gpu=\"0\",pid=\"10\",process=\"python3\","
                  "namespace=\"team-a\",pod=\"infer-a\"} 1073741824\n"));
  EXPECT_FALSE(has(body, "container_id="));  // inside a pod, the pod names it
  EXPECT_FALSE(has(body, "pod_uid"));
  const json current = json::parse(f.state->current_json());
  EXPECT_EQ(current["gpus"][1]["processes"][0]["job"],
            json::parse(R"({"id":"4711","id_source":"slurm","slurm_job_id":"4711"})"));
  EXPECT_TRUE(current["gpus"][0]["processes"][3]["job"].is_null());
  if (testing::have_promtool()) {
    const auto result = testing::promtool_check(body);
    EXPECT_EQ(result.exit_code, 0) << result.output;
  }
}

TEST(ExporterState, HostileProcessNamesAreEscapedAndValid) {
  Fixture f;
  f.tick(seconds(0), {sample(0)});
  ProcessSnapshot snap;
  snap.gpu = 0;
  auto proc = [](unsigned pid, std::string name) {
    GpuProcess p;
    p.pid = pid;
    p.used_memory_bytes = std::uint64_t{pid} * 1000;
    p.name = std::move(name);
    return p;
  };
  snap.processes = {proc(1, "/usr/bin/python3"),   proc(2, "/opt/a \"quoted\" name"),
                    proc(3, "/x/back\\slash"),     proc(4, "/x/new\nline"),
                    proc(5, "/x/bad\xFF\xC3utf8"), proc(6, "caf\xC3\xA9")};
  snap.processes.push_back(snap.processes[0]);  // NVML lists pid 1 twice: one series
  GpuProcess nameless;
  nameless.pid = 7;
  nameless.name = Reading<std::string>::missing(Missing::kNoPermission);
  snap.processes.push_back(nameless);  // no memory either: counted, no memory series
  f.state->on_processes(snap);
  const std::string body = f.metrics();
  EXPECT_TRUE(has(body, "{gpu=\"0\",pid=\"1\",process=\"python3\"} 2000\n")) << body;
  EXPECT_TRUE(has(body, "{gpu=\"0\",pid=\"2\",process=\"a \\\"quoted\\\" name\"} 2000\n"));
  EXPECT_TRUE(has(body, "{gpu=\"0\",pid=\"3\",process=\"back\\\\slash\"} 3000\n"));
  // clean_text turns the newline into a space: nothing can start a new line.
  EXPECT_TRUE(has(body, "{gpu=\"0\",pid=\"4\",process=\"new line\"} 4000\n"));
  EXPECT_TRUE(has(body, "{gpu=\"0\",pid=\"5\",process=\"bad\xEF\xBF\xBD\xEF\xBF\xBDutf8\"}"));
  EXPECT_TRUE(has(body, "{gpu=\"0\",pid=\"6\",process=\"caf\xC3\xA9\"} 6000\n"));
  EXPECT_FALSE(has(body, "pid=\"7\""));
  EXPECT_TRUE(has(body, "gpumon_gpu_processes{gpu=\"0\"} 7\n"));
  const json current = json::parse(f.state->current_json());
  const json& list = current["gpus"][0]["processes"];
  ASSERT_EQ(list.size(), 8U);
  EXPECT_EQ(list[1]["name"], "a \"quoted\" name");
  EXPECT_TRUE(list[7]["name"].is_null());
  EXPECT_TRUE(list[7]["used_memory_bytes"].is_null());
  EXPECT_TRUE(list[7]["sm_util_pct"].is_null());
  // The real parser agrees (each series is one line, the escapes read back).
  if (auto py = testing::python_with_client()) {
    const auto r = testing::python_parse(*py, body);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const json parsed = json::parse(r.output);
    const json& s = parsed["families"]["gpumon_gpu_process_memory_bytes"]["samples"];
    ASSERT_EQ(s.size(), 6U);
    EXPECT_EQ(s[1][1]["process"], "a \"quoted\" name");
    EXPECT_EQ(s[2][1]["process"], "back\\slash");
  }
}

TEST(ExporterState, ConcurrentScrapesShareOneBodyUntilNewData) {
  Fixture f;
  f.tick(seconds(0), {sample(0)});
  const auto a = f.state->metrics_text();
  const auto b = f.state->metrics_text();
  EXPECT_EQ(a.get(), b.get());
  f.state->count_request(200);  // counters alone do not re-render at once
  EXPECT_EQ(f.state->metrics_text().get(), a.get());
  f.clock->advance(ExporterState::kMaxBodyAge);  // but within kMaxBodyAge
  const auto c = f.state->metrics_text();
  EXPECT_NE(c.get(), a.get());
  EXPECT_TRUE(has(*c, "gpumon_http_requests_total{code=\"200\"} 1\n")) << *c;
  f.tick(seconds(0), {sample(0)});  // new data: a new body
  EXPECT_NE(f.state->metrics_text().get(), c.get());
}

TEST(ExporterState, HttpCountersAreRendered) {
  Fixture f;
  f.state->count_request(200);
  f.state->count_request(200);
  f.state->count_request(404);
  f.state->count_rejected("too_many_connections");
  const std::string body = f.metrics();
  EXPECT_TRUE(has(body, "gpumon_http_requests_total{code=\"200\"} 2\n")) << body;
  EXPECT_TRUE(has(body, "gpumon_http_requests_total{code=\"404\"} 1\n"));
  EXPECT_TRUE(has(body, "gpumon_http_rejected_total{reason=\"too_many_connections\"} 1\n"));
}

TEST(ExporterState, HttpCountsFromTheServerAreAddedToItsOwn) {
  ExporterOptions o;
  o.http_counts = [] {
    HttpCounts c;
    c.requests[200] = 5;
    c.rejected["method"] = 2;
    return c;
  };
  Fixture f(o);
  f.state->count_request(200);
  const std::string body = f.metrics();
  EXPECT_TRUE(has(body, "gpumon_http_requests_total{code=\"200\"} 6\n")) << body;
  EXPECT_TRUE(has(body, "gpumon_http_rejected_total{reason=\"method\"} 2\n"));
}

TEST(ExporterState, HealthFollowsTheAgeOfTheNewestTick) {
  Fixture f;                                       // limit: 3 x 1 s + 5 s
  EXPECT_TRUE(f.state->health().ok);               // just started
  EXPECT_TRUE(has(f.metrics(), "gpumon_up 0\n"));  // but no sample yet
  f.clock->advance(seconds(9));
  Health h = f.state->health();
  EXPECT_FALSE(h.ok);
  EXPECT_TRUE(has(h.reason, "no sample")) << h.reason;
  f.tick(seconds(0), {sample(0)});
  EXPECT_TRUE(f.state->health().ok);
  EXPECT_EQ(f.state->health().reason, "ok");
  f.clock->advance(seconds(8));
  EXPECT_TRUE(f.state->health().ok);
  f.clock->advance(seconds(1));
  h = f.state->health();
  EXPECT_FALSE(h.ok);
  EXPECT_EQ(h.reason, "last sample 9.0 s ago (limit 8.0 s)");
  const std::string body = f.metrics();
  EXPECT_TRUE(has(body, "gpumon_up 0\n")) << body;
  EXPECT_TRUE(has(body, "gpumon_last_sample_age_seconds 9\n"));
}

TEST(ExporterState, HistoryIsColumnarWithNullsAndRefusesUnknownMetrics) {
  SamplerConfig config;
  config.processes = false;
  gpumon::testing::FakeRun run(2, config);
  auto state = std::make_shared<ExporterState>(*run.sampler, ExporterOptions{}, run.clock);
  run.sampler->add_sink(state);
  run.run_for(seconds(5));  // ticks at 0, 1, 2, 3 and 4 s, and the final one at 5 s
  const json h =
      json::parse(state->history_json(2.5, {"utilization_gpu_pct", "temperature_memory_c"}));
  EXPECT_EQ(h["interval_s"], 1.0);
  EXPECT_EQ(h["stride"], 1);
  EXPECT_EQ(h["metrics"], json({"utilization_gpu_pct", "temperature_memory_c"}));
  ASSERT_EQ(h["gpus"].size(), 2U);
  const json& g1 = h["gpus"][1];
  EXPECT_EQ(g1["gpu"], 1);
  ASSERT_EQ(g1["time"].size(), 3U);  // the ticks at 3, 4 and 5 s
  EXPECT_LT(g1["time"][0].get<double>(), g1["time"][2].get<double>());
  EXPECT_EQ(g1["values"]["utilization_gpu_pct"], json({51, 51, 51}));
  EXPECT_EQ(g1["values"]["temperature_memory_c"], json({nullptr, nullptr, nullptr}));
  const json all = json::parse(state->history_json(100, {}));
  EXPECT_EQ(all["metrics"].size(), kMetricCount + 1) << "the catalog and throttled";
  EXPECT_EQ(all["gpus"][0]["time"].size(), 6U);
  EXPECT_EQ(json::parse(state->history_json(-1, {}))["gpus"].size(), 0U);
  EXPECT_THROW(state->history_json(10, {"serial"}), std::invalid_argument);
}

TEST(ExporterState, ChartMetricsOutlastTheSamplersTicks) {
  // The sampler keeps 10 ticks; the chart history keeps the hour.
  SamplerConfig config;
  config.processes = false;
  config.history_capacity = 10;
  gpumon::testing::FakeRun run(2, config);
  auto state = std::make_shared<ExporterState>(*run.sampler, ExporterOptions{}, run.clock);
  run.sampler->add_sink(state);
  run.run_for(seconds(30));
  const json charts = json::parse(state->history_json(3600, {"power_draw_w", "throttled"}));
  EXPECT_EQ(charts["gpus"][1]["time"].size(), 31U);
  EXPECT_EQ(charts["gpus"][1]["values"]["throttled"].size(), 31U);
  const json ticks =
      json::parse(state->history_json(3600, {"power_draw_w", "utilization_memory_pct"}));
  EXPECT_EQ(ticks["gpus"][1]["time"].size(), 10U) << "a metric outside the charts: the ticks";
  EXPECT_EQ(json::parse(state->history_json(3600, {}))["gpus"][1]["time"].size(), 10U);
}

TEST(ExporterState, HistoryStrideKeepsEveryNthTick) {
  std::vector<TickSample> ticks(5);
  for (unsigned t = 0; t < ticks.size(); ++t) {
    ticks[t].wall_time = WallClock::time_point(seconds(100 + t));
    DeviceSample s = sample(0);
    s.utilization_gpu_pct = t;
    ticks[t].gpus = {s};
  }
  const json h = json::parse(render_history_json(ticks, 1.0, {MetricId::kUtilizationGpuPct}, 2));
  EXPECT_EQ(h["stride"], 2);
  EXPECT_EQ(h["gpus"][0]["time"], json({100.0, 102.0, 104.0}));
  EXPECT_EQ(h["gpus"][0]["values"]["utilization_gpu_pct"], json({0, 2, 4}));
}

TEST(ExporterState, ThrottledIsTheOneRuleOverReasonsAndClocks) {
  // Thermal slowdown at 1500 of 1980 MHz: throttled; the power cap at 1900 (96 %): by design,
  // not; no reasons: unknown, not "not throttled".
  std::vector<TickSample> ticks(3);
  const std::vector<std::pair<std::optional<std::uint64_t>, unsigned>> rows = {
      {kClockEventSwThermalSlowdown, 1500}, {kClockEventSwPowerCap, 1900}, {std::nullopt, 1980}};
  for (unsigned t = 0; t < ticks.size(); ++t) {
    ticks[t].wall_time = WallClock::time_point(seconds(100 + t));
    DeviceSample s = sample(0);
    s.clock_event_reasons = rows[t].first ? Reading<std::uint64_t>(*rows[t].first)
                                          : Reading<std::uint64_t>::missing(Missing::kNotSupported);
    s.sm_clock_mhz = rows[t].second;
    ticks[t].gpus = {s};
  }
  std::vector<DeviceStatic> devices(1);
  devices[0].index = 0, devices[0].max_sm_clock_mhz = 1980U;
  const json h = json::parse(render_history_json(ticks, 1.0, {}, 1, &devices));
  EXPECT_EQ(h["metrics"], json({"throttled"}));
  EXPECT_EQ(h["gpus"][0]["values"]["throttled"], json({1, 0, nullptr}));
  EXPECT_FALSE(json::parse(render_history_json(ticks, 1.0, {}, 1))["gpus"][0]["values"].contains(
      "throttled"))
      << "only when asked";
}

TEST(ExporterState, DevicesJsonHasStaticFactsAndNoSerial) {
  Fixture f;
  const json d = json::parse(f.state->devices_json());
  ASSERT_EQ(d["gpus"].size(), 2U);
  EXPECT_EQ(d["gpus"][0]["name"], "Fake GPU");
  EXPECT_TRUE(d["gpus"][0]["pci_bus_id"].is_null());
  EXPECT_FALSE(d["gpus"][0].contains("uuid"));
  EXPECT_FALSE(d["gpus"][0].contains("serial"));
  EXPECT_EQ(d["system"]["driver_version"], "580.0-fake");
  EXPECT_EQ(d["system"]["simulated"], "sampler-fake-backend");
  EXPECT_EQ(d["system"]["hostname"], "");
  EXPECT_EQ(d["history_capacity"], 3600);
  EXPECT_TRUE(d["system"]["cuda_version"].is_null());
  EXPECT_EQ(cuda_version(12040), "12.4");
}

}  // namespace
}  // namespace gpumon::exporter
