// SPDX-License-Identifier: MIT
#include "cli/record_command.h"

#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <optional>

#include "agent/socket_path.h"
#include "cli/arg_parse.h"
#include "cli/backend_open.h"
#include "cli/python_hooks.h"
#include "cli/version.h"
#include "host/cgroup_oom.h"
#include "node/node_pipeline.h"
#include "record/export_command.h"
#include "util/plural.h"
#include "util/stop_signals.h"

extern char** environ;

namespace gpumon::cli {
namespace {

struct RecordOptions {
  std::string path;
  std::chrono::milliseconds interval{1000};
  bool diagnose = true;
  bool force = false;
  bool python_hooks = true;
  node::LogFormat log_format = node::LogFormat::kText;
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
    } else if (a == "--force") {
      o.force = true;
    } else if (a == "--no-python-hooks") {
      o.python_hooks = false;
    } else if (a == "--log-format") {
      const auto f = value(v) ? node::parse_log_format(v) : std::nullopt;
      if (!f) return node::kLogFormatError;
      o.log_format = *f;
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
    "usage: gpumon record [-o FILE] [--force] [--interval MS] [--no-diagnose]\n"
    "                     [--no-python-hooks] [--log-format text|json] [-- COMMAND ARGS...]\n"
    "  Records every GPU (default every 1000 ms) into FILE (default gpumon-DATE-TIME.gpumon)\n"
    "  until COMMAND exits (gpumon then exits with its status) or, without a command, until\n"
    "  Ctrl-C, SIGTERM or SIGHUP. SIGTERM and SIGHUP are passed on to COMMAND, and the\n"
    "  recording goes on until it exits. Read it back with\n"
    "  `gpumon export FILE --format csv|jsonl`. --force overwrites an existing FILE.\n"
    "  COMMAND gets GPUMON_AGENT_SOCKET: `import gpumon` in it records its training steps too.\n"
    "  A Python training script needs no change: every Python process COMMAND starts (the\n"
    "  ranks of torchrun too) sends its steps, ended by the optimizer's step, with the wait\n"
    "  for each DataLoader batch (docs/python.md); --no-python-hooks turns that off.\n"
    "  The last 10 minutes are diagnosed every 5 s: findings are logged here as they appear and\n"
    "  clear, and pushed to the training processes (docs/DIAGNOSES.md, \"Live\");\n"
    "  --no-diagnose turns that off (`gpumon doctor FILE` reads the whole run afterwards).\n"
    "  --log-format json writes this log as one JSON object per line.\n";

pid_t spawn(const std::vector<std::string>& command, std::string& error) {
  std::vector<char*> argv;
  for (const auto& s : command) argv.push_back(const_cast<char*>(s.c_str()));
  argv.push_back(nullptr);
  // The command gets the signal dispositions we were started with, not the ones we ignore.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  const sigset_t defaults = util::ScopedStopSignals::child_sigdefault();
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, argv[0], nullptr, &attr, argv.data(), environ);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    error = "cannot run '" + command[0] + "': " + std::strerror(rc);
    return -1;
  }
  return pid;
}

// Why `program` cannot be run as posix_spawnp() would look it up (a name with a '/' as a
// path, else along PATH), or "" when it can.
std::string not_runnable(const std::string& program) {
  auto runnable = [](const std::string& p) {
    struct stat st {};
    return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
  };
  if (program.find('/') != std::string::npos)
    return runnable(program)
               ? ""
               : std::strerror(::access(program.c_str(), F_OK) == 0 ? EACCES : ENOENT);
  const char* env = std::getenv("PATH");
  const std::string path = env != nullptr ? env : "/usr/local/bin:/usr/bin:/bin";
  for (std::size_t begin = 0; begin <= path.size();) {
    std::size_t end = path.find(':', begin);
    if (end == std::string::npos) end = path.size();
    const std::string dir = end == begin ? "." : path.substr(begin, end - begin);
    if (runnable(dir + "/" + program)) return "";
    begin = end + 1;
  }
  return "not found on PATH";
}

int exit_status_of(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

// How the command ended, in the recording (docs/recording.md, "meta"): its exit status as a shell
// gives it, the signal that killed it, and how many processes the kernel's OOM killer killed in
// our memory cgroup meanwhile (an exit by SIGKILL alone does not say why). `gpumon doctor` turns
// them into the run_failed finding.
void note_command_end(node::NodePipeline& pipeline, int status,
                      std::optional<std::uint64_t> oom_kills_before) {
  pipeline.set_recording_end_meta("command_exit_status", std::to_string(exit_status_of(status)));
  if (WIFSIGNALED(status)) {
    const char* abbrev = sigabbrev_np(WTERMSIG(status));
    pipeline.set_recording_end_meta(
        "command_signal", abbrev != nullptr ? std::string("SIG") + abbrev
                                            : "signal " + std::to_string(WTERMSIG(status)));
  }
  const auto after = host::cgroup_oom_kills();
  if (oom_kills_before && after && *after >= *oom_kills_before)
    pipeline.set_recording_end_meta("command_oom_kills",
                                    std::to_string(*after - *oom_kills_before));
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
  // A command that cannot run is said before anything is recorded: no empty file is left.
  if (!o.command.empty()) {
    if (const std::string why = not_runnable(o.command[0]); !why.empty()) {
      console.err << "gpumon record: cannot run '" << o.command[0] << "': " << why << "\n";
      return 127;
    }
  }
  std::string command_line;
  for (const auto& s : o.command) command_line += (command_line.empty() ? "" : " ") + s;
  node::NodeOptions n;
  n.name = "record";
  n.open_backend = [&console, format = o.log_format] {
    return open_backend_logged(console, "record", format);
  };
  n.log_format = o.log_format;
  n.sampler.interval = o.interval;
  n.record_path = o.path;
  n.record_overwrite = o.force;
  n.record_command = command_line;
  n.version = version_number();
  n.diagnose = o.diagnose;
  // The command's training steps (`import gpumon`) come over a socket of this run, named in its
  // environment; without it the recording still goes on.
  if (!o.command.empty()) {
    const std::string path = agent::default_socket_path();
    n.agent_socket =
        path.substr(0, path.rfind('/') + 1) + "record-" + std::to_string(::getpid()) + ".sock";
  }

  // Ctrl-C reaches the whole foreground group, the command included: we only note it and go
  // on waiting for the command, so its exit status is what we return.
  util::ScopedStopSignals signals(o.command.empty() ? util::ScopedStopSignals::Second::kKills
                                                    : util::ScopedStopSignals::Second::kIsNoted);
  int exit_code = 0;
  const auto pipeline = node::NodePipeline::open(std::move(n), console.err, exit_code);
  if (!pipeline) return exit_code;
  const node::NodeLog& log = pipeline->log();
  pipeline->start();
  if (pipeline->agent()) {
    ::setenv("GPUMON_AGENT_SOCKET", pipeline->agent_socket().c_str(), 1);
    if (o.python_hooks && !o.command.empty()) {
      std::string why;
      if (const std::string dir = python_hooks_dir(why); !dir.empty())
        enable_python_hooks(dir);
      else
        log.say("no_python_hooks", "no step hooks for Python: " + why,
                node::NodeLog::Level::kWarning);
    }
  }

  const auto started = std::chrono::steady_clock::now();
  const auto oom_kills_before = host::cgroup_oom_kills();
  std::string error;
  pid_t child = -1;
  if (!o.command.empty()) {
    child = spawn(o.command, error);
    if (child < 0) log.say("error", error, node::NodeLog::Level::kError);
  }
  int result = child < 0 && !o.command.empty() ? 127 : 0;
  while (child > 0 || (o.command.empty() && !util::ScopedStopSignals::stop_requested())) {
    if (child > 0) {
      int status = 0;
      if (waitpid(child, &status, WNOHANG) == child) {
        result = exit_status_of(status);
        note_command_end(*pipeline, status, oom_kills_before);
        break;
      }
      // A TERM or a HUP (the terminal went away) is passed on, as a terminal would, and the
      // recording goes on until the command exits: a command that survives it stays recorded.
      if (const int sig = util::ScopedStopSignals::last_signal(); sig == SIGTERM || sig == SIGHUP) {
        util::ScopedStopSignals::clear();
        kill(child, sig);
        log.say("signal", std::string(sig == SIGHUP ? "SIGHUP" : "SIGTERM") +
                              " passed on to the command; recording until it exits");
      }
    }
    pipeline->poll();
    util::ScopedStopSignals::sleep_for(std::chrono::milliseconds(50));
  }
  pipeline->stop();

  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const SamplerStats stats = pipeline->sampler()->stats();
  struct stat file {};
  const long long bytes = ::stat(o.path.c_str(), &file) == 0 ? file.st_size : -1;
  const node::RecordingCounts st = pipeline->recording_counts();
  std::string summary = o.path + ": " + std::to_string(pipeline->sampler()->device_count()) +
                        " GPU(s), " + util::count_of(st.ticks, "tick") + " over " +
                        std::to_string(static_cast<long long>(seconds + 0.5)) + " s, " +
                        std::to_string(bytes) + " bytes";
  if (st.steps != 0) summary += ", " + util::count_of(st.steps, "training step");
  if (st.dropped != 0) summary += ", " + util::count_of(st.dropped, "item") + " dropped";
  if (stats.overruns != 0) summary += ", " + util::count_of(stats.overruns, "late tick");
  log.say("stopped", summary);
  if (st.stopped && !pipeline->reported_record_stop())
    log.say("recording_stopped", st.error, node::NodeLog::Level::kError);
  return result;
}

int run_export(const std::vector<std::string>& args, const Console& console) {
  return record::run_export_command(args, console.out, console.err);
}

}  // namespace gpumon::cli
