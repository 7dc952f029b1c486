// SPDX-License-Identifier: MIT
// The routes of `gpumon serve` over a real sampler on the fake NVML's demo scenario, called
// in-process (no sockets: src/http's tests cover the wire), and `gpumon serve`'s options.
#include "cli/serve_routes.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "cli/serve_command.h"
#include "exporter/exposition.h"
#include "fake_nvml/fake_test_env.h"
#include "gpu/testing/open_fake_backend.h"
#include "training/protocol.h"
#include "util/testing/eventually.h"
#include "web/dashboard_asset.h"

namespace gpumon::cli {
namespace {

using nlohmann::json;

Request get(const std::string& path, std::map<std::string, std::string> query = {}) {
  Request r;
  r.method = "GET";
  r.path = path;
  r.query = std::move(query);
  r.remote_address = "127.0.0.1";
  return r;
}

std::string header(const Response& r, const std::string& name) {
  for (const auto& [n, v] : r.headers)
    if (n == name) return v;
  return "";
}

class ServeRoutes : public ::testing::Test {
 protected:
  void SetUp() override {
    auto backend = gpumon::testing::open_fake_backend();
    ASSERT_NE(backend, nullptr);
    SamplerConfig config;
    config.interval = std::chrono::milliseconds(50);
    config.host_process_details = false;  // the scenario's PIDs are not on this host
    sampler_ = std::make_unique<Sampler>(std::move(backend), config);
    exporter::ExporterOptions options;
    options.version = "0.1.0";
    options.training = training_;
    state_ = std::make_shared<exporter::ExporterState>(*sampler_, options);
    sampler_->add_sink(state_);
    handler_ = make_serve_handler(state_);
    sampler_->start();
    // Until the first ticks are published (history and metrics have data).
    ASSERT_TRUE(testing_util::eventually([&] { return sampler_->stats().ticks >= 3; }));
  }
  void TearDown() override {
    if (sampler_) sampler_->stop();
  }

  fake::testing::FakeScenario scenario_{"demo"};
  std::unique_ptr<Sampler> sampler_;
  std::shared_ptr<exporter::TrainingState> training_ = std::make_shared<exporter::TrainingState>();
  std::shared_ptr<exporter::ExporterState> state_;
  Handler handler_;
};

TEST_F(ServeRoutes, MetricsServesTheSharedExpositionWithItsExactContentType) {
  const Response r = handler_(get("/metrics"));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "text/plain; version=0.0.4; charset=utf-8");
  ASSERT_NE(r.body, nullptr);
  EXPECT_NE(r.body->find("gpumon_gpus 8\n"), std::string::npos);
  EXPECT_NE(r.body->find("gpumon_gpu_utilization_ratio{gpu=\"7\"}"), std::string::npos);
  // The cached body itself, not a copy: a second scrape shares it until a tick renders a new
  // one (every 50 ms here, so the two may straddle a tick; then they share the next).
  EXPECT_TRUE(testing_util::eventually(
      [&] { return handler_(get("/metrics")).body.get() == state_->metrics_text().get(); }));
}

TEST_F(ServeRoutes, MetricsAnswersOpenMetricsToAScraperThatPrefersIt) {
  Request prometheus = get("/metrics");
  prometheus.headers["accept"] =
      "application/openmetrics-text;version=1.0.0;q=0.5,text/plain;version=0.0.4;q=0.3,*/*;q=0.2";
  const Response om = handler_(prometheus);
  EXPECT_EQ(om.content_type, "application/openmetrics-text; version=1.0.0; charset=utf-8");
  ASSERT_NE(om.body, nullptr);
  EXPECT_TRUE(om.body->ends_with("# EOF\n"));
  EXPECT_NE(om.body->find("# TYPE gpumon_gpu_energy_joules counter\n"), std::string::npos);
  // The answer depends on Accept: caches between must know it.
  const auto vary = std::find(om.headers.begin(), om.headers.end(),
                              std::pair<std::string, std::string>{"Vary", "Accept"});
  EXPECT_NE(vary, om.headers.end());
  EXPECT_EQ(handler_(get("/metrics")).content_type, "text/plain; version=0.0.4; charset=utf-8");
}

TEST_F(ServeRoutes, HealthIsOkWhileTheSamplerTicks) {
  const Response r = handler_(get("/health"));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(*r.body, "ok\n");
}

TEST_F(ServeRoutes, JsonRoutesAnswerJson) {
  for (const char* path : {"/api/v1/devices", "/api/v1/current", "/api/v1/history"}) {
    const Response r = handler_(get(path));
    EXPECT_EQ(r.status, 200) << path;
    EXPECT_EQ(r.content_type, "application/json") << path;
    const json body = json::parse(*r.body);
    ASSERT_TRUE(body.contains("gpus")) << path;
    EXPECT_EQ(body["gpus"].size(), 8U) << path;
  }
  const json devices = json::parse(*handler_(get("/api/v1/devices")).body);
  EXPECT_EQ(devices["system"]["simulated"], "demo");
  EXPECT_FALSE(devices["gpus"][0].contains("uuid"));  // only with --uuid
}

TEST_F(ServeRoutes, TrainingRouteAndMetricsShowTheAttachedRanks) {
  json empty = json::parse(*handler_(get("/api/v1/training")).body);
  EXPECT_EQ(empty["enabled"], true);
  EXPECT_EQ(empty["ranks"].size(), 0U);
  // What the agent server's sinks hand over for one rank: a hello naming GPU 0's bus, a step.
  const std::string bus = sampler_->devices().at(0).pci_bus_id.value();
  training_->on_rank_event(training::rank_event(
      0, 42, 1, "hello", json{{"rank", 1}, {"local_rank", 1}, {"pci_bus_id", bus}}.dump()));
  training::Step s;
  s.pid = 42;
  s.rank = 1;
  s.step = 7;
  s.cpu_step_s = 0.5;
  s.data_wait_s = 0.125;
  s.reserved_bytes = 4096;
  training_->on_step(s);

  const Response r = handler_(get("/api/v1/training"));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "application/json");
  const json body = json::parse(*r.body);
  ASSERT_EQ(body["ranks"].size(), 1U);
  EXPECT_EQ(body["ranks"][0]["rank"], 1);
  EXPECT_EQ(body["ranks"][0]["gpu"], 0);
  EXPECT_EQ(body["ranks"][0]["last_step"], 7);
  EXPECT_EQ(body["ranks"][0]["reserved_bytes"], 4096);
  // /metrics renders again at once (new training data), not after the 1 s cache.
  const std::string metrics = *handler_(get("/metrics")).body;
  EXPECT_NE(metrics.find("gpumon_training_steps_total{rank=\"1\",local_rank=\"1\",gpu=\"0\"} 1\n"),
            std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("gpumon_training_ranks 1\n"), std::string::npos);
  // The training charts' hour: the step in its second, the rank named.
  const Response h =
      handler_(get("/api/v1/training/history", {{"seconds", "3600"}, {"points", "600"}}));
  ASSERT_EQ(h.status, 200) << *h.body;
  EXPECT_EQ(h.content_type, "application/json");
  const json hist = json::parse(*h.body);
  ASSERT_EQ(hist["ranks"].size(), 1U);
  EXPECT_EQ(hist["ranks"][0]["rank"], 1);
  EXPECT_EQ(hist["ranks"][0]["values"]["data_wait_share"][0], 0.25);
  EXPECT_EQ(hist["ranks"][0]["values"]["reserved_bytes"][0], 4096);
}

TEST_F(ServeRoutes, HistoryTakesSecondsAndMetrics) {
  const Response r = handler_(
      get("/api/v1/history", {{"seconds", "60"}, {"metrics", "utilization_memory_pct,,"}}));
  ASSERT_EQ(r.status, 200) << *r.body;
  const json body = json::parse(*r.body);
  // Not a chart metric: the sampler's 50 ms ticks, not the chart history's 1 s rows.
  EXPECT_EQ(body["metrics"], json::array({"utilization_memory_pct"}));
  EXPECT_GE(body["gpus"][0]["time"].size(), 3U);
  EXPECT_EQ(body["gpus"][0]["values"].size(), 1U);
  // points=2: every stride-th tick, at most 2 per GPU.
  const json two = json::parse(
      *handler_(get("/api/v1/history",
                    {{"seconds", "60"}, {"metrics", "utilization_memory_pct"}, {"points", "2"}}))
           .body);
  EXPECT_LE(two["gpus"][0]["time"].size(), 2U);
  EXPECT_GE(two["stride"].get<std::size_t>(), 2U);
  // seconds=0: no ticks (no GPU columns), still a well-formed answer.
  const Response none = handler_(get("/api/v1/history", {{"seconds", "0"}}));
  ASSERT_EQ(none.status, 200);
  const json empty = json::parse(*none.body);
  EXPECT_EQ(empty["gpus"].size(), 0U);
  EXPECT_FALSE(empty["metrics"].empty());
}

TEST_F(ServeRoutes, HistoryRefusesBadParametersWith400) {
  for (const char* seconds : {"-1", "abc", "nan", "inf", "1e999", "", "5s"}) {
    const Response r = handler_(get("/api/v1/history", {{"seconds", seconds}}));
    EXPECT_EQ(r.status, 400) << seconds;
    EXPECT_EQ(r.content_type, "application/json");
    EXPECT_NE(json::parse(*r.body)["error"].get<std::string>().find("seconds"), std::string::npos);
  }
  for (const char* path : {"/api/v1/history", "/api/v1/training/history"}) {
    for (const char* points :
         {"0", "1", "-1", "1.5", "abc", "", "1000001", "99999999999999999999"}) {
      const Response r = handler_(get(path, {{"points", points}}));
      EXPECT_EQ(r.status, 400) << path << " " << points;
      EXPECT_NE(json::parse(*r.body)["error"].get<std::string>().find("points"), std::string::npos);
    }
    const Response r = handler_(get(path, {{"seconds", "-1"}}));
    EXPECT_EQ(r.status, 400) << path;
  }
  const Response r = handler_(get("/api/v1/history", {{"metrics", "power_draw_w,bogus"}}));
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(json::parse(*r.body)["error"].get<std::string>().find("bogus"), std::string::npos);
}

TEST_F(ServeRoutes, DashboardCarriesItsContentSecurityPolicy) {
  const Response r = handler_(get("/"));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "text/html; charset=utf-8");
  EXPECT_EQ(*r.body, dashboard_html());
  EXPECT_EQ(header(r, "Content-Security-Policy"), dashboard_csp());
  EXPECT_NE(header(r, "Content-Security-Policy").find("frame-ancestors 'none'"), std::string::npos);
}

TEST_F(ServeRoutes, DiagnosesAreOffWithoutASource) {
  const Response r = handler_(get("/api/v1/diagnoses"));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(json::parse(*r.body)["enabled"], false);
  EXPECT_EQ(handler_(get("/metrics")).body->find("gpumon_health_score"), std::string::npos);
}

TEST_F(ServeRoutes, DiagnosesFromTheLiveSource) {
  DiagnosesSource source;
  source.metrics_text = [] { return std::string("gpumon_health_score 77\n"); };
  source.json = [] { return std::string(R"({"health_score":77})"); };
  Handler h = make_serve_handler(state_, source);
  const std::string metrics = *h(get("/metrics")).body;
  EXPECT_NE(metrics.find("gpumon_gpu_info{"), std::string::npos) << "the exporter's body first";
  EXPECT_TRUE(metrics.ends_with("gpumon_health_score 77\n"));
  const Response r = h(get("/api/v1/diagnoses"));
  EXPECT_EQ(r.content_type, "application/json");
  EXPECT_EQ(json::parse(*r.body)["health_score"], 77);
}

// A recording that stopped (disk full) must show where monitoring looks, not only on stderr.
TEST_F(ServeRoutes, AStoppedRecordingFailsHealthAndShowsInMetrics) {
  auto error = std::make_shared<std::string>();
  RecordingSource source;
  source.error = [error] { return *error; };
  Handler h = make_serve_handler(state_, {}, source);
  EXPECT_EQ(h(get("/health")).status, 200);
  std::string metrics = *h(get("/metrics")).body;
  EXPECT_NE(metrics.find("\ngpumon_recording_ok 1\n"), std::string::npos) << metrics;
  EXPECT_EQ(metrics.find("gpumon_recording_error_info"), std::string::npos);

  *error = "disk full: recording stopped at 2026-11-29T20:01:20.000Z (run.gpumon: \"full\")";
  const Response r = h(get("/health"));
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(*r.body, "recording stopped: " + *error + "\n");
  metrics = *h(get("/metrics")).body;
  EXPECT_NE(metrics.find("\ngpumon_recording_ok 0\n"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("\ngpumon_recording_error_info{error=\"disk full: recording stopped at "
                         "2026-11-29T20:01:20.000Z (run.gpumon: \\\"full\\\")\"} 1\n"),
            std::string::npos)
      << metrics;
  EXPECT_EQ(handler_(get("/metrics")).body->find("gpumon_recording_ok"), std::string::npos)
      << "no recording, no family";
}

TEST(ServePaths, EveryRouteIsOnTheAllowList) {
  const auto paths = serve_paths();
  EXPECT_EQ(paths.size(), 9U);
  for (const char* p :
       {"/", "/metrics", "/health", "/api/v1/devices", "/api/v1/current", "/api/v1/history",
        "/api/v1/training", "/api/v1/training/history", "/api/v1/diagnoses"})
    EXPECT_NE(std::find(paths.begin(), paths.end(), p), paths.end()) << p;
}

TEST(SplitMetricList, DropsEmptyItems) {
  EXPECT_EQ(split_metric_list(""), std::vector<std::string>{});
  EXPECT_EQ(split_metric_list(",a,,b,"), (std::vector<std::string>{"a", "b"}));
}

TEST(ServeArgs, DefaultsAreLoopback9477AtOneSecond) {
  ServeOptions o;
  EXPECT_EQ(parse_serve_args({}, o), "");
  EXPECT_EQ(o.listen, "127.0.0.1:9477");
  EXPECT_EQ(o.interval, std::chrono::milliseconds(1000));
  EXPECT_FALSE(o.dcgm_compat || o.show_uuid || o.pcie);
}

TEST(ServeArgs, EveryOptionInBothSpellings) {
  ServeOptions o;
  EXPECT_EQ(parse_serve_args({"--listen", "[::1]:0", "--interval=200", "--compat", "dcgm", "--uuid",
                              "--pcie", "--web.config.file", "web.yml", "--record", "x.gpumon"},
                             o),
            "");
  EXPECT_EQ(o.listen, "[::1]:0");
  EXPECT_EQ(o.interval, std::chrono::milliseconds(200));
  EXPECT_TRUE(o.dcgm_compat && o.show_uuid && o.pcie);
  EXPECT_EQ(o.web_config_file, "web.yml");
  EXPECT_EQ(o.record_path, "x.gpumon");
  ServeOptions p;
  EXPECT_EQ(parse_serve_args({"--web-config=w2.yml", "--compat=dcgm"}, p), "");
  EXPECT_EQ(p.web_config_file, "w2.yml");
  EXPECT_TRUE(p.dcgm_compat);
  // DCGM's conventions: UUID labels and the PCIe fields, unless turned off.
  EXPECT_TRUE(p.show_uuid && p.pcie);
  ServeOptions q;
  EXPECT_EQ(parse_serve_args({"--no-uuid", "--compat", "dcgm", "--no-pcie"}, q), "");
  EXPECT_TRUE(q.dcgm_compat);
  EXPECT_FALSE(q.show_uuid || q.pcie);
  ServeOptions r;
  EXPECT_EQ(parse_serve_args({"--uuid", "--no-uuid"}, r), "");  // the last one wins
  EXPECT_FALSE(r.show_uuid);
}

TEST(ServeArgs, RefusesWhatItCannotHonour) {
  ServeOptions o;
  EXPECT_EQ(parse_serve_args({"--interval", "9"}, o),
            "--interval takes whole milliseconds from 10 to 60000, not '9'");
  EXPECT_NE(parse_serve_args({"--interval", "60001"}, o), "");
  EXPECT_NE(parse_serve_args({"--interval", "1.5"}, o), "");
  EXPECT_EQ(parse_serve_args({"--compat", "nvitop"}, o), "--compat takes 'dcgm', not 'nvitop'");
  EXPECT_EQ(parse_serve_args({"--listen"}, o), "--listen needs an address such as 127.0.0.1:9477");
  EXPECT_EQ(parse_serve_args({"--uuid=yes"}, o), "--uuid takes no value");
  EXPECT_EQ(parse_serve_args({"--frob"}, o), "unknown option '--frob'");
  EXPECT_EQ(parse_serve_args({"--listen", "127.0.0.1:1", "-h"}, o), "help");
  EXPECT_EQ(parse_serve_args({"--agent-socket"}, o), "--agent-socket needs a socket path");
  ServeOptions both;
  EXPECT_EQ(parse_serve_args({"--no-agent", "--agent-socket", "/tmp/a.sock"}, both),
            "--agent-socket and --no-agent exclude each other");
}

TEST(ServeArgs, AgentSocketOptions) {
  ServeOptions o;
  EXPECT_EQ(parse_serve_args({}, o), "");
  EXPECT_TRUE(o.agent_socket.empty());  // the default path
  EXPECT_FALSE(o.no_agent);
  EXPECT_EQ(parse_serve_args({"--agent-socket=/tmp/x/agent.sock"}, o), "");
  EXPECT_EQ(o.agent_socket, "/tmp/x/agent.sock");
  ServeOptions p;
  EXPECT_EQ(parse_serve_args({"--no-agent"}, p), "");
  EXPECT_TRUE(p.no_agent);
  EXPECT_EQ(parse_serve_args({"--no-agent=1"}, p), "--no-agent takes no value");
}

}  // namespace
}  // namespace gpumon::cli
