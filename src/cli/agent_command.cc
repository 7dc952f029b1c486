// SPDX-License-Identifier: MIT
#include "cli/agent_command.h"

#include <charconv>
#include <chrono>

#include "agent/socket_path.h"
#include "cli/arg_parse.h"
#include "cli/backend_open.h"
#include "cli/version.h"
#include "node/node_pipeline.h"
#include "util/stop_signals.h"

namespace gpumon::cli {
namespace {

struct AgentOptions {
  std::string socket;
  std::string output;  // empty: no recording
  bool force = false;  // overwrite an existing output
  std::chrono::milliseconds interval{1000};
  double exit_when_idle_s = 0;  // 0: never
  bool diagnose = true;
  std::chrono::milliseconds diagnose_period{5000};
  node::LogFormat log_format = node::LogFormat::kText;
};

constexpr const char* kUsage =
    "usage: gpumon agent [--socket PATH] [-o FILE [--force]] [--interval MS]\n"
    "                    [--exit-when-idle SECONDS]\n"
    "                    [--no-diagnose] [--diagnose-period MS] [--log-format text|json]\n"
    "  Listens for the step events of training processes (`import gpumon`, docs/python.md) on\n"
    "  PATH (default $XDG_RUNTIME_DIR/gpumon/agent.sock, else /tmp/gpumon-UID/agent.sock).\n"
    "  Samples every GPU (every MS ms, default 1000) and diagnoses the last 10 minutes every\n"
    "  5 s (MS): findings are logged here as they appear and clear, and pushed to the training\n"
    "  processes (docs/DIAGNOSES.md, \"Live\"); --no-diagnose turns that off.\n"
    "  With -o it also records the samples and the steps into FILE (--force: overwrite it).\n"
    "  Runs until Ctrl-C or SIGTERM, or after SECONDS without any client connected.\n"
    "  --log-format json writes its log (findings included) as one JSON object per line.\n";

std::string parse(const std::vector<std::string>& args, AgentOptions& o) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](std::string& out) {
      if (i + 1 >= args.size()) return false;
      out = args[++i];
      return true;
    };
    std::string v;
    if (a == "--socket") {
      if (!value(o.socket) || o.socket.empty()) return "--socket needs a path";
    } else if (a == "-o" || a == "--output") {
      if (!value(o.output) || o.output.empty()) return a + " needs a file name";
    } else if (a == "--force") {
      o.force = true;
    } else if (a == "--interval") {
      long ms = 0;
      if (!value(v) ||
          std::from_chars(v.data(), v.data() + v.size(), ms).ptr != v.data() + v.size() ||
          ms < 10 || ms > 60000)
        return "--interval takes whole milliseconds from 10 to 60000";
      o.interval = std::chrono::milliseconds(ms);
    } else if (a == "--exit-when-idle") {
      double s = 0;
      if (!value(v) ||
          std::from_chars(v.data(), v.data() + v.size(), s).ptr != v.data() + v.size() || !(s > 0))
        return "--exit-when-idle takes seconds (> 0)";
      o.exit_when_idle_s = s;
    } else if (a == "--no-diagnose") {
      o.diagnose = false;
    } else if (a == "--diagnose-period") {
      long ms = 0;
      if (!value(v) ||
          std::from_chars(v.data(), v.data() + v.size(), ms).ptr != v.data() + v.size() ||
          ms < 100 || ms > 600000)
        return "--diagnose-period takes whole milliseconds from 100 to 600000";
      o.diagnose_period = std::chrono::milliseconds(ms);
    } else if (a == "--log-format") {
      const auto f = value(v) ? node::parse_log_format(v) : std::nullopt;
      if (!f) return node::kLogFormatError;
      o.log_format = *f;
    } else if (a == "-h" || a == "--help") {
      return "help";
    } else {
      return "unknown option '" + a + "'";
    }
  }
  if (o.force && o.output.empty()) return "--force goes with -o FILE";
  if (o.socket.empty()) o.socket = agent::default_socket_path();
  return {};
}

}  // namespace

int run_agent_command(const std::vector<std::string>& args, const Console& console) {
  AgentOptions o;
  if (const std::string err = parse(args, o); !err.empty()) {
    if (err == "help") {
      console.out << kUsage;
      return 0;
    }
    console.err << "gpumon agent: " << err << "\n" << kUsage;
    return kExitUsage;
  }

  node::NodeOptions n;
  n.name = "agent";
  n.open_backend = [&console, format = o.log_format] {
    return open_backend_logged(console, "agent", format);
  };
  n.log_format = o.log_format;
  n.sample = !o.output.empty() || o.diagnose;
  n.gpus_required = !o.output.empty();
  n.sampler.interval = o.interval;
  n.record_path = o.output;
  n.record_overwrite = o.force;
  n.record_command = "agent";
  n.version = version_number();
  n.diagnose = o.diagnose;
  n.diagnose_options.period = o.diagnose_period;
  n.agent_socket = o.socket;
  n.agent_socket_required = true;
  // Without -o the socket comes first: the ranks that started this agent give it 5 s to
  // listen, and opening NVML can take a while on a busy node.
  n.agent_socket_first = o.output.empty();

  util::ScopedStopSignals signals;
  int exit_code = 0;
  const auto pipeline = node::NodePipeline::open(std::move(n), console.err, exit_code);
  if (!pipeline) return exit_code;
  pipeline->start();
  const node::NodeLog& log = pipeline->log();
  log.say("listening",
          "listening on " + o.socket +
              (pipeline->recording() ? ", recording into " + o.output : std::string()));

  auto last_busy = std::chrono::steady_clock::now();
  while (util::ScopedStopSignals::sleep_for(std::chrono::milliseconds(50))) {
    const auto now = std::chrono::steady_clock::now();
    if (pipeline->agent()->stats().clients_now != 0) last_busy = now;
    if (o.exit_when_idle_s > 0 &&
        std::chrono::duration<double>(now - last_busy).count() >= o.exit_when_idle_s)
      break;
    pipeline->poll();
  }
  pipeline->stop();

  log.say("stopped",
          pipeline->agent_summary() + (pipeline->recording()
                                           ? "; " + o.output + ": " + pipeline->recording_summary()
                                           : std::string()));
  return 0;
}

}  // namespace gpumon::cli
