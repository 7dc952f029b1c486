// SPDX-License-Identifier: MIT
#include "cli/agent_command.h"

#include <signal.h>

#include <atomic>
#include <charconv>
#include <chrono>
#include <mutex>
#include <thread>

#include "agent/socket_path.h"
#include "cli/arg_parse.h"
#include "cli/backend_open.h"
#include "cli/version.h"
#include "diagnose/live/live_findings.h"
#include "sampler/sampler.h"

namespace gpumon::cli {
namespace {

std::atomic<int> g_agent_signal{0};
extern "C" void gpumon_agent_stop_signal(int sig) {
  g_agent_signal.store(sig);
}

struct AgentOptions {
  std::string socket;
  std::string output;  // empty: no recording
  std::chrono::milliseconds interval{1000};
  double exit_when_idle_s = 0;  // 0: never
  bool diagnose = true;
  std::chrono::milliseconds diagnose_period{5000};
};

constexpr const char* kUsage =
    "usage: gpumon agent [--socket PATH] [-o FILE] [--interval MS] [--exit-when-idle SECONDS]\n"
    "                    [--no-diagnose] [--diagnose-period MS]\n"
    "  Listens for the step events of training processes (`import gpumon`, docs/python.md) on\n"
    "  PATH (default $XDG_RUNTIME_DIR/gpumon/agent.sock, else /tmp/gpumon-UID/agent.sock).\n"
    "  Samples every GPU (every MS ms, default 1000) and diagnoses the last 10 minutes every\n"
    "  5 s (MS): findings are logged here as they appear and clear, and pushed to the training\n"
    "  processes (docs/DIAGNOSES.md, \"Live\"); --no-diagnose turns that off.\n"
    "  With -o it also records the samples and the steps into FILE.\n"
    "  Runs until Ctrl-C or SIGTERM, or after SECONDS without any client connected.\n";

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
    } else if (a == "-h" || a == "--help") {
      return "help";
    } else {
      return "unknown option '" + a + "'";
    }
  }
  if (o.socket.empty()) o.socket = agent::default_socket_path();
  return {};
}

}  // namespace

std::unique_ptr<agent::AgentServer> open_agent_socket(
    const std::string& path, std::shared_ptr<record::RecordingWriter> writer,
    const Console& console, const std::string& prefix, std::string& error,
    std::shared_ptr<diagnose::LiveDiagnoser> live) {
  if (error = agent::prepare_listen_path(path); !error.empty()) return nullptr;
  agent::AgentSinks sinks;
  if (writer || live) {
    sinks.on_step = [writer, live](const record::RecordedStep& s) {
      if (writer) writer->on_step(s);
      if (live) live->on_step(s);
    };
    sinks.on_rank_event = [writer, live](const record::RecordedRankEvent& e) {
      if (writer) writer->on_rank_event(e);
      if (live) live->on_rank_event(e);
    };
  }
  auto err_mutex = std::make_shared<std::mutex>();
  std::ostream* err = &console.err;
  sinks.on_warning = [err, err_mutex, prefix](const std::string& w) {
    std::lock_guard lock(*err_mutex);
    *err << prefix << w << '\n' << std::flush;
  };
  return agent::AgentServer::start({.socket_path = path}, std::move(sinks), error);
}

namespace {

diagnose::LiveDiagnoser::Listener findings_reporter(const Console& console,
                                                    const std::string& prefix,
                                                    agent::AgentServer* push_to) {
  auto err_mutex = std::make_shared<std::mutex>();
  std::ostream* err = &console.err;
  return [err, err_mutex, prefix, push_to](const diagnose::Diagnosis& d,
                                           const diagnose::FindingChange& c) {
    const std::int64_t now = record::to_unix_ms(std::chrono::system_clock::now());
    {
      std::lock_guard lock(*err_mutex);
      for (const auto& f : c.appeared)
        *err << prefix << diagnose::finding_log_line(f, false, now) << '\n';
      for (const auto& f : c.cleared)
        *err << prefix << diagnose::finding_log_line(f, true, now) << '\n';
      *err << std::flush;
    }
    if (push_to) push_to->push(diagnose::findings_message(d));
  };
}

}  // namespace

void start_live_findings(diagnose::LiveDiagnoser& live, const Console& console,
                         const std::string& prefix, agent::AgentServer* push_to) {
  live.add_listener(findings_reporter(console, prefix, push_to));
  if (push_to) push_to->push(diagnose::findings_message(*live.latest()));
  live.start();
}

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

  std::shared_ptr<record::RecordingWriter> writer;
  std::unique_ptr<Sampler> sampler;
  std::shared_ptr<diagnose::LiveDiagnoser> live;
  diagnose::LiveDiagnoserOptions live_options;
  live_options.period = o.diagnose_period;
  if (o.diagnose) live = std::make_shared<diagnose::LiveDiagnoser>(live_options);
  // Without -o the socket comes first: the ranks that started this agent give it 5 s to
  // listen, and opening NVML can take a while on a busy node.
  std::unique_ptr<agent::AgentServer> server;
  auto listen = [&] {
    std::string error;
    server = open_agent_socket(o.socket, writer, console, "gpumon agent: ", error, live);
    if (!server) console.err << "gpumon agent: " << error << "\n";
    return server != nullptr;
  };
  if (o.output.empty() && !listen()) return 1;
  NvmlOpenError open_error;
  std::unique_ptr<NvmlBackend> backend;
  if (!o.output.empty() || live) {
    backend = open_backend(console, &open_error);
    if (!backend && !o.output.empty()) return kExitNoGpu;
    if (!backend)
      console.err << "gpumon agent: no GPU samples: diagnosing the training steps only\n";
  }
  if (backend) {
    std::vector<DeviceStatic> devices;
    for (unsigned i = 0; i < backend->device_count(); ++i) {
      backend->sample(i, MetricGroup::kStaticDetails);
      devices.push_back(backend->device(i));
    }
    if (live) live->set_devices(devices);
    std::string error;
    if (!o.output.empty()) {
      writer = record::RecordingWriter::create(
          {.path = o.output}, record::make_run_info(backend->system(), version_number(), "agent"),
          devices, error);
      if (!writer) {
        console.err << "gpumon agent: " << error << "\n";
        return 1;
      }
    }
    if (!backend->system().simulated_scenario.empty())
      console.err << "gpumon agent: SIMULATED GPUs (scenario "
                  << backend->system().simulated_scenario << ")\n";
    SamplerConfig config;
    config.interval = o.interval;
    sampler = std::make_unique<Sampler>(std::move(backend), config);
    if (writer) sampler->add_sink(writer);
    if (live) sampler->add_sink(live);
  }

  if (!server && !listen()) {
    if (writer) writer->close();
    return 1;
  }
  g_agent_signal.store(0);
  struct sigaction sa {};
  sa.sa_handler = gpumon_agent_stop_signal;
  sigemptyset(&sa.sa_mask);
  struct sigaction old_int {
  }, old_term{};
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);
  if (live) start_live_findings(*live, console, "gpumon agent: ", server.get());
  if (sampler) sampler->start();
  console.err << "gpumon agent: listening on " << o.socket
              << (writer ? ", recording into " + o.output : std::string()) << "\n"
              << std::flush;

  auto last_busy = std::chrono::steady_clock::now();
  bool reported_stop = false;
  while (g_agent_signal.load() == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const auto now = std::chrono::steady_clock::now();
    if (server->stats().clients_now != 0) last_busy = now;
    if (o.exit_when_idle_s > 0 &&
        std::chrono::duration<double>(now - last_busy).count() >= o.exit_when_idle_s)
      break;
    if (writer && writer->status().stopped && !reported_stop) {
      console.err << "gpumon agent: " << writer->status().error << "\n";
      reported_stop = true;
    }
  }
  if (live) live->stop();  // before the server its listener pushes to
  server->stop();
  if (sampler) sampler->stop();
  if (writer) writer->close();
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);

  const agent::AgentServerStats st = server->stats();
  console.err << "gpumon agent: " << st.steps << " steps from " << st.clients_accepted
              << " client(s)";
  if (st.clients_dropped != 0) console.err << ", " << st.clients_dropped << " dropped";
  if (writer) {
    const record::RecordingStatus rs = writer->status();
    console.err << "; " << o.output << ": " << rs.ticks_written << " ticks, " << rs.steps_written
                << " steps";
    if (rs.dropped != 0) console.err << ", " << rs.dropped << " items dropped";
    if (rs.stopped) console.err << " (" << rs.error << ")";
  }
  console.err << "\n";
  return 0;
}

}  // namespace gpumon::cli
