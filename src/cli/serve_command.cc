// SPDX-License-Identifier: MIT
#include "cli/serve_command.h"

#include <unistd.h>

#include <charconv>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "agent/socket_path.h"
#include "cli/arg_parse.h"
#include "cli/backend_open.h"
#include "cli/serve_routes.h"
#include "cli/version.h"
#include "diagnose/live/live_findings.h"
#include "diagnose/live/live_metrics.h"
#include "exporter/exporter_state.h"
#include "exporter/training_state.h"
#include "http/http_server.h"
#include "http/web_config.h"
#include "node/node_pipeline.h"
#include "util/host_name.h"
#include "util/option_cursor.h"
#include "util/plural.h"
#include "util/stop_signals.h"

namespace gpumon::cli {
namespace {

constexpr std::chrono::milliseconds kMinInterval{10};
constexpr std::chrono::milliseconds kMaxInterval{60000};
// /api/v1/history's default window: the sampler's ticks (every metric) hold that much at any
// interval (lowered to fit SamplerConfig::history_max_bytes with many GPUs or short intervals).
// The dashboard's charts read their own hour (exporter/chart_history.h), 20 times smaller.
constexpr std::chrono::seconds kHistorySpan{600};

// "127.0.0.1:0" with the bound port 43125 -> "127.0.0.1:43125"; ":9477" -> "*:9477".
std::string bound_address(const std::string& listen, std::uint16_t port) {
  const std::size_t colon = listen.rfind(':');
  std::string host = colon == std::string::npos ? listen : listen.substr(0, colon);
  if (host.empty()) host = "*";
  return host + ":" + std::to_string(port);
}

bool uses_tls(const std::string& web_config_file) {
  if (web_config_file.empty()) return false;
  WebConfig config;
  return load_web_config(web_config_file, config).empty() && config.tls.has_value();
}

}  // namespace

std::string serve_usage() {
  return "usage: gpumon serve [--listen ADDR] [--interval MS] [--compat dcgm]\n"
         "                    [--uuid | --no-uuid] [--pcie | --no-pcie]\n"
         "                    [--web.config.file FILE] [--record FILE [--force]]\n"
         "                    [--agent-socket PATH | --no-agent] [--no-diagnose]\n"
         "                    [--log-format text|json]\n"
         "  Samples every GPU and serves it over HTTP until Ctrl-C or SIGTERM:\n"
         "    /metrics          Prometheus text format (gpumon_* names)\n"
         "    /health           200 while sampling, 503 with the reason when stale\n"
         "    /api/v1/devices, /api/v1/current, /api/v1/history?seconds=N&metrics=a,b   JSON\n"
         "    /                 the live web dashboard\n"
         "    /api/v1/training  JSON of the training processes attached to the agent socket\n"
         "    /api/v1/diagnoses JSON of the live diagnoses of the last 10 minutes\n"
         "  Scrapes read the latest samples; they never call NVML. Training processes\n"
         "  (`import gpumon`) attach to the agent socket serve hosts; their steps appear as\n"
         "  gpumon_training_* in /metrics. The live diagnoses (every 5 s) are logged here,\n"
         "  pushed to the training processes and served as gpumon_diagnosis_active and\n"
         "  gpumon_health_score.\n"
         "\n"
         "  --listen ADDR       host:port, [v6]:port or :port (every interface); port 0 picks a\n"
         "                      free one (default 127.0.0.1:9477, loopback only)\n"
         "  --interval MS       sampling interval, 10 to 60000 ms (default 1000)\n"
         "  --compat dcgm       also the DCGM_FI_* names, types and labels dcgm-exporter uses;\n"
         "                      implies --uuid and --pcie, as dcgm-exporter has both\n"
         "  --uuid, --no-uuid   GPU UUIDs in labels and JSON (hidden by default without\n"
         "                      --compat dcgm; serial numbers are never served)\n"
         "  --pcie, --no-pcie   PCIe TX/RX throughput (each read blocks a reader about 20 ms;\n"
         "                      off by default without --compat dcgm)\n"
         "  --web.config.file FILE   TLS and basic auth, the exporter-toolkit web config of\n"
         "                      node_exporter and dcgm-exporter (also --web-config FILE)\n"
         "  --record FILE       also write a recording (gpumon export FILE reads it back),\n"
         "                      with the training processes' steps (--force: overwrite it)\n"
         "  --agent-socket PATH the agent socket training processes attach to (default\n"
         "                      $XDG_RUNTIME_DIR/gpumon/agent.sock, else\n"
         "                      /tmp/gpumon-UID/agent.sock); when another agent already\n"
         "                      serves it, serve warns and goes on without it\n"
         "  --no-agent          host no agent socket\n"
         "  --no-diagnose       run no live diagnoses\n"
         "  --log-format json   write the log (findings included) as one JSON object per line\n"
         "See docs/exporter.md.\n";
}

std::string parse_serve_args(const std::vector<std::string>& args, ServeOptions& o) {
  std::optional<bool> uuid, pcie;  // unset: what --compat dcgm says
  for (util::OptionCursor c(args); c.next();) {
    const std::string& name = c.name();
    std::string value;
    auto take = [&](const std::string& what) -> std::string {
      const std::optional<std::string> v = c.value();
      value = v.value_or("");
      return value.empty() ? name + " needs " + what : "";
    };
    auto flag = [&]() -> std::string {
      return c.has_inline_value() ? name + " takes no value" : "";
    };
    std::string err;
    if (name == "-h" || name == "--help") {
      return "help";
    } else if (name == "--listen") {
      if (err = take("an address such as 127.0.0.1:9477"); err.empty()) o.listen = value;
    } else if (name == "--interval") {
      if (err = take("milliseconds (10 to 60000)"); err.empty()) {
        long ms = 0;
        const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), ms);
        if (ec != std::errc() || end != value.data() + value.size() || ms < kMinInterval.count() ||
            ms > kMaxInterval.count())
          return "--interval takes whole milliseconds from 10 to 60000, not '" + value + "'";
        o.interval = std::chrono::milliseconds(ms);
      }
    } else if (name == "--compat") {
      if (err = take("a value (dcgm)"); err.empty()) {
        if (value != "dcgm") return "--compat takes 'dcgm', not '" + value + "'";
        o.dcgm_compat = true;
      }
    } else if (name == "--uuid" || name == "--no-uuid") {
      if (err = flag(); err.empty()) uuid = name == "--uuid";
    } else if (name == "--pcie" || name == "--no-pcie") {
      if (err = flag(); err.empty()) pcie = name == "--pcie";
    } else if (name == "--web.config.file" || name == "--web-config") {
      if (err = take("a file name"); err.empty()) o.web_config_file = value;
    } else if (name == "--record") {
      if (err = take("a file name"); err.empty()) o.record_path = value;
    } else if (name == "--force") {
      if (err = flag(); err.empty()) o.force = true;
    } else if (name == "--agent-socket") {
      if (err = take("a socket path"); err.empty()) o.agent_socket = value;
    } else if (name == "--no-agent") {
      if (err = flag(); err.empty()) o.no_agent = true;
    } else if (name == "--no-diagnose") {
      if (err = flag(); err.empty()) o.no_diagnose = true;
    } else if (name == "--log-format") {
      if (err = take("text or json"); err.empty()) {
        const auto f = node::parse_log_format(value);
        if (!f) return node::kLogFormatError;
        o.log_format = *f;
      }
    } else {
      return "unknown option '" + c.arg() + "'";
    }
    if (!err.empty()) return err;
  }
  o.show_uuid = uuid.value_or(o.dcgm_compat);
  o.pcie = pcie.value_or(o.dcgm_compat);
  if (o.force && o.record_path.empty()) return "--force goes with --record FILE";
  if (o.no_agent && !o.agent_socket.empty())
    return "--agent-socket and --no-agent exclude each other";
  return "";
}

int run_serve_command(const std::vector<std::string>& args, const Console& console) {
  ServeOptions o;
  if (const std::string err = parse_serve_args(args, o); !err.empty()) {
    if (err == "help") {
      console.out << serve_usage();
      return 0;
    }
    console.err << "gpumon serve: " << err << "\n" << serve_usage();
    return kExitUsage;
  }
  // Installed before any thread starts, so a Ctrl-C during start-up is seen too.
  util::ScopedStopSignals stop_signals;

  node::NodeOptions n;
  n.name = "serve";
  n.open_backend = [&console, format = o.log_format] {
    return open_backend_logged(console, "serve", format);
  };
  n.log_format = o.log_format;
  n.sampler.interval = o.interval;
  n.sampler.pcie = o.pcie;
  n.sampler.history_capacity = std::max<std::size_t>(
      1, static_cast<std::size_t>(std::chrono::milliseconds(kHistorySpan) / o.interval));
  n.record_path = o.record_path;
  n.record_overwrite = o.force;
  n.version = version_number();
  n.diagnose = !o.no_diagnose;
  if (!o.no_agent)
    n.agent_socket = o.agent_socket.empty() ? agent::default_socket_path() : o.agent_socket;
  int exit_code = 0;
  const auto pipeline = node::NodePipeline::open(std::move(n), console.err, exit_code);
  if (!pipeline) return exit_code;
  if (util::ScopedStopSignals::stop_requested()) return 0;
  Sampler& sampler = *pipeline->sampler();

  auto counters = std::make_shared<HttpCounters>();
  exporter::ExporterOptions exporter_options;
  exporter_options.dcgm_compat = o.dcgm_compat;
  exporter_options.show_uuid = o.show_uuid;
  exporter_options.hostname = util::host_name();
  exporter_options.version = version_number();
  exporter_options.revision = version_revision();
  exporter_options.http_counts = [counters] {
    return exporter::HttpCounts{counters->responses(), counters->rejections()};
  };
  if (!o.no_agent) {
    auto training = std::make_shared<exporter::TrainingState>();
    exporter_options.training = training;
    pipeline->add_step_sink(training);
  }
  auto state = std::make_shared<exporter::ExporterState>(sampler, exporter_options);
  pipeline->add_sample_sink(state);

  ServerOptions server_options;
  server_options.listen_address = o.listen;
  server_options.web_config_file = o.web_config_file;
  server_options.paths = serve_paths();
  server_options.counters = counters;
  const node::NodeLog& log = pipeline->log();
  server_options.log = [&log](std::string_view line) { log.say("http", line); };
  DiagnosesSource diagnoses;
  if (const auto live = pipeline->live()) {
    diagnoses.metrics_text = [live] { return diagnose::diagnosis_metrics_text(*live->latest()); };
    diagnoses.json = [live] { return diagnose::to_json(*live->latest(), "live").dump() + "\n"; };
  }
  RecordingSource recording;
  if (pipeline->recording()) {
    recording.error = [p = pipeline.get()] {
      const node::RecordingCounts c = p->recording_counts();
      if (!c.stopped) return std::string();
      return c.error.empty() ? std::string("a write failed") : c.error;
    };
  }
  HttpServer server(server_options, make_serve_handler(state, diagnoses, recording));
  if (std::string error = server.start(); !error.empty()) {
    log.say("error", error, node::NodeLog::Level::kError);
    if (error.starts_with("cannot listen on "))
      log.say("error",
              "is another gpumon serve or exporter running there? Choose another address with "
              "--listen, e.g. --listen 127.0.0.1:9478",
              node::NodeLog::Level::kError);
    return 1;
  }
  // After the HTTP port is ours: a second serve that fails to listen never touches the socket.
  pipeline->start();
  if (pipeline->agent())
    log.say("agent_socket", "training processes attach on " + pipeline->agent_socket());
  if (const std::string warning = server.security_warning(); !warning.empty())
    log.say("security", warning, node::NodeLog::Level::kWarning);
  log.say("listening", std::string("listening on ") +
                           (uses_tls(o.web_config_file) ? "https://" : "http://") +
                           bound_address(o.listen, server.port()) + "/ (" +
                           std::to_string(sampler.device_count()) + " GPU(s), every " +
                           std::to_string(o.interval.count()) +
                           " ms; /metrics, /health, /api/v1/*, dashboard at /); Ctrl-C stops");

  while (util::ScopedStopSignals::sleep_for(std::chrono::milliseconds(500))) pipeline->poll();

  server.stop();  // no handler runs after this, so the state can go
  pipeline->stop();
  const SamplerStats stats = sampler.stats();
  std::string summary = "stopped (" + util::count_of(stats.ticks, "tick");
  if (stats.overruns != 0) summary += ", " + std::to_string(stats.overruns) + " late";
  if (pipeline->agent()) summary += "; " + pipeline->agent_summary();
  if (pipeline->recording()) summary += "; " + o.record_path + ": " + pipeline->recording_summary();
  log.say("stopped", summary + ")");
  return 0;
}

}  // namespace gpumon::cli
