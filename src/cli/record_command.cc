// SPDX-License-Identifier: MIT
#include "cli/record_command.h"

#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <ctime>
#include <memory>
#include <thread>

#include "agent/socket_path.h"
#include "cli/agent_command.h"
#include "cli/arg_parse.h"
#include "cli/backend_open.h"
#include "cli/version.h"
#include "record/export_command.h"
#include "record/recording_writer.h"
#include "sampler/sampler.h"

extern char** environ;

namespace gpumon::cli {
namespace {

std::atomic<int> g_stop_signal{0};
extern "C" void gpumon_record_stop_signal(int sig) {
  g_stop_signal.store(sig);
}

struct RecordOptions {
  std::string path;
  std::chrono::milliseconds interval{1000};
  bool diagnose = true;
  std::vector<std::string> command;
};

std::string default_path() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char buf[64];
  std::strftime(buf, sizeof(buf), "gpumon-%Y%m%d-%H%M%S.gpumon", &tm);
  return buf;
}

// Returns an error message, or empty when `args` parsed.
std::string parse(const std::vector<std::string>& args, RecordOptions& o) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") {
      o.command.assign(args.begin() + static_cast<long>(i) + 1, args.end());
      if (o.command.empty()) return "nothing to run after `--`";
      break;
    }
    auto value = [&](std::string& out) {
      if (i + 1 >= args.size()) return false;
      out = args[++i];
      return true;
    };
    std::string v;
    if (a == "-o" || a == "--output") {
      if (!value(o.path) || o.path.empty()) return a + " needs a file name";
    } else if (a == "--interval") {
      if (!value(v)) return "--interval needs milliseconds (10 to 60000)";
      long ms = 0;
      const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), ms);
      if (ec != std::errc() || end != v.data() + v.size() || ms < 10 || ms > 60000)
        return "--interval takes whole milliseconds from 10 to 60000, not '" + v + "'";
      o.interval = std::chrono::milliseconds(ms);
    } else if (a == "--no-diagnose") {
      o.diagnose = false;
    } else if (a == "-h" || a == "--help") {
      return "help";
    } else {
      return "unknown option '" + a + "' (to record a command, put it after `--`)";
    }
  }
  if (o.path.empty()) o.path = default_path();
  return "";
}

constexpr const char* kUsage =
    "usage: gpumon record [-o FILE] [--interval MS] [--no-diagnose] [-- COMMAND ARGS...]\n"
    "  Records every GPU (default every 1000 ms) into FILE (default gpumon-DATE-TIME.gpumon)\n"
    "  until COMMAND exits (gpumon then exits with its status) or, without a command, until\n"
    "  Ctrl-C. Read it back with `gpumon export FILE --format csv|jsonl`.\n"
    "  COMMAND gets GPUMON_AGENT_SOCKET: `import gpumon` in it records its training steps too.\n"
    "  The last 10 minutes are diagnosed every 5 s: findings are logged here as they appear and\n"
    "  clear, and pushed to the training processes (docs/DIAGNOSES.md, \"Live\");\n"
    "  --no-diagnose turns that off (`gpumon doctor FILE` reads the whole run afterwards).\n";

pid_t spawn(const std::vector<std::string>& command, std::string& error) {
  std::vector<char*> argv;
  for (const auto& s : command) argv.push_back(const_cast<char*>(s.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, argv[0], nullptr, nullptr, argv.data(), environ);
  if (rc != 0) {
    error = "cannot run '" + command[0] + "': " + std::strerror(rc);
    return -1;
  }
  return pid;
}

int exit_status_of(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

}  // namespace

int run_record_command(const std::vector<std::string>& args, const Console& console) {
  RecordOptions o;
  if (const std::string err = parse(args, o); !err.empty()) {
    if (err == "help") {
      console.out << kUsage;
      return 0;
    }
    console.err << "gpumon record: " << err << "\n" << kUsage;
    return kExitUsage;
  }
  NvmlOpenError open_error;
  std::unique_ptr<NvmlBackend> backend = open_backend(console, &open_error);
  if (!backend) return kExitNoGpu;
  for (unsigned i = 0; i < backend->device_count(); ++i)
    backend->sample(i, MetricGroup::kStaticDetails);  // the recording stores them once
  std::vector<DeviceStatic> devices;
  for (unsigned i = 0; i < backend->device_count(); ++i) devices.push_back(backend->device(i));

  std::string command_line;
  for (const auto& s : o.command) command_line += (command_line.empty() ? "" : " ") + s;
  const record::RunInfo run =
      record::make_run_info(backend->system(), version_number(), command_line);
  std::string error;
  std::shared_ptr<record::RecordingWriter> writer =
      record::RecordingWriter::create({.path = o.path}, run, devices, error);
  if (!writer) {
    console.err << "gpumon record: " << error << "\n";
    return 1;
  }
  if (!backend->system().simulated_scenario.empty())
    console.err << "gpumon record: SIMULATED GPUs (scenario "
                << backend->system().simulated_scenario << ")\n";

  std::shared_ptr<diagnose::LiveDiagnoser> live;
  if (o.diagnose) {
    live = std::make_shared<diagnose::LiveDiagnoser>(diagnose::LiveDiagnoserOptions{});
    live->set_devices(devices);
  }

  SamplerConfig config;
  config.interval = o.interval;
  Sampler sampler(std::move(backend), config);
  sampler.add_sink(writer);
  if (live) sampler.add_sink(live);

  // Ctrl-C reaches the whole foreground group, the command included: we only note it and go
  // on waiting for the command, so its exit status is what we return.
  g_stop_signal.store(0);
  struct sigaction sa {};
  sa.sa_handler = gpumon_record_stop_signal;
  sigemptyset(&sa.sa_mask);
  struct sigaction old_int {
  }, old_term{};
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);

  // The command's training steps (`import gpumon`) come over a socket of this run, named in its
  // environment; without it the recording still goes on.
  std::unique_ptr<agent::AgentServer> agent_socket;
  if (!o.command.empty()) {
    std::string path = agent::default_socket_path();
    path = path.substr(0, path.rfind('/') + 1) + "record-" + std::to_string(::getpid()) + ".sock";
    agent_socket = open_agent_socket(path, writer, console, "gpumon record: ", error, live);
    if (agent_socket)
      ::setenv("GPUMON_AGENT_SOCKET", path.c_str(), 1);
    else
      console.err << "gpumon record: training steps will not be recorded: " << error << "\n";
  }

  if (live) start_live_findings(*live, console, "gpumon record: ", agent_socket.get());
  const auto started = std::chrono::steady_clock::now();
  sampler.start();
  pid_t child = -1;
  if (!o.command.empty()) {
    child = spawn(o.command, error);
    if (child < 0) console.err << "gpumon record: " << error << "\n";
  }
  int result = child < 0 && !o.command.empty() ? 127 : 0;
  bool reported_stop = false;
  while (true) {
    if (child > 0) {
      int status = 0;
      const pid_t done = waitpid(child, &status, WNOHANG);
      if (done == child) {
        result = exit_status_of(status);
        break;
      }
      if (g_stop_signal.load() == SIGTERM) {  // pass a TERM on, once
        g_stop_signal.store(0);
        kill(child, SIGTERM);
      }
    } else if (g_stop_signal.load() != 0 || !o.command.empty()) {
      break;
    }
    const record::RecordingStatus st = writer->status();
    if (st.stopped && !reported_stop) {
      console.err << "gpumon record: " << st.error << "\n";
      reported_stop = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (live) live->stop();  // before the socket its listener pushes to
  if (agent_socket) agent_socket->stop();
  sampler.stop();
  writer->close();
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);

  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const record::RecordingStatus st = writer->status();
  const SamplerStats stats = sampler.stats();
  struct stat file {};
  const long long bytes = ::stat(o.path.c_str(), &file) == 0 ? file.st_size : -1;
  console.err << "gpumon record: " << o.path << ": " << sampler.device_count() << " GPU(s), "
              << st.ticks_written << " ticks over " << static_cast<long long>(seconds + 0.5)
              << " s, " << bytes << " bytes";
  if (st.steps_written != 0) console.err << ", " << st.steps_written << " training steps";
  if (st.dropped != 0) console.err << ", " << st.dropped << " items dropped";
  if (stats.overruns != 0) console.err << ", " << stats.overruns << " late ticks";
  console.err << "\n";
  if (st.stopped && !reported_stop) console.err << "gpumon record: " << st.error << "\n";
  return result;
}

int run_export(const std::vector<std::string>& args, const Console& console) {
  return record::run_export_command(args, console.out, console.err);
}

}  // namespace gpumon::cli
