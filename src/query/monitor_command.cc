// SPDX-License-Identifier: MIT
#include "query/monitor_command.h"

#include <charconv>
#include <ctime>
#include <exception>
#include <fstream>
#include <map>

#include "query/device_select.h"
#include "query/output_loop.h"
#include "query/query_parse.h"
#include "util/stop_signals.h"

namespace gpumon::query {
namespace {

std::string_view name_of(MonitorKind k) {
  return k == MonitorKind::kDmon ? "dmon" : "pmon";
}

std::tm local_now() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm out{};
  localtime_r(&t, &out);
  return out;
}

// The lines of one sample of every chosen GPU; `previous` keeps each GPU's dmon sample for the
// next line's violation columns.
std::string sample_lines(const MonitorOptions& o, GpuBackend& backend,
                         const std::vector<unsigned>& devices,
                         std::map<unsigned, DeviceSample>& previous) {
  const std::tm now = local_now();
  std::string text;
  for (unsigned gpu : devices) {
    if (o.kind == MonitorKind::kDmon) {
      DmonInput in;
      in.gpu = gpu;
      in.sample = backend.sample(gpu, dmon_metrics(o.select));
      if (dmon_needs_pcie(o.select)) in.pcie = backend.pcie_throughput(gpu);
      const auto before = previous.find(gpu);
      if (before != previous.end()) in.previous = &before->second;
      text += dmon_line(o.select, o.stamp, in, now);
      previous[gpu] = std::move(in.sample);
      continue;
    }
    const auto listed = backend.processes(gpu);
    std::vector<PmonProcess> rows;
    if (listed && !listed.value().empty()) {
      const auto util = backend.process_utilization(gpu);
      rows =
          pmon_processes(listed.value(), util ? util.value() : std::vector<ProcessUtilization>{});
    }
    if (rows.empty()) text += pmon_line(o.select, o.stamp, gpu, std::nullopt, now);
    for (const PmonProcess& p : rows) text += pmon_line(o.select, o.stamp, gpu, p, now);
  }
  return text;
}

int run(MonitorKind kind, const std::vector<std::string>& args, std::ostream& out,
        std::ostream& err, const detail::QueryEnvironment& env) {
  auto options = parse_monitor_options(kind, args);
  if (!options) {
    err << options.error().message;
    return options.error().exit_code;
  }
  const MonitorOptions& o = *options;
  if (o.help) {
    out << monitor_usage(kind);
    return kExitOk;
  }
  QueryError open_error;
  std::unique_ptr<GpuBackend> backend = env.open_backend(&open_error);
  if (!backend) {
    err << open_error.message;
    return open_error.exit_code;
  }
  if (!backend->system().simulated_scenario.empty())
    err << "gpumon: simulated GPUs (scenario " << backend->system().simulated_scenario << ")\n";
  auto devices = choose_devices(o.ids, *backend);
  if (!devices) {
    err << devices.error().message;
    return devices.error().exit_code;
  }

  std::ofstream file;
  std::ostream* sink = &out;
  if (!o.file.empty()) {
    auto opened = open_output_file(o.file, file);
    if (!opened) {
      err << opened.error().message;
      return opened.error().exit_code;
    }
    sink = *opened;
  }
  std::map<unsigned, DeviceSample> previous;
  auto loop = [&](LoopClock& clock) {
    return write_loop(
        clock, o.delay, o.count, *sink, err,
        [&](std::ostream& s) {
          s << (o.kind == MonitorKind::kDmon ? dmon_header(o.select, o.stamp)
                                             : pmon_header(o.select, o.stamp));
        },
        [&](std::ostream& s) { s << sample_lines(o, *backend, *devices, previous); });
  };
  if (env.clock != nullptr) return loop(*env.clock);
  const util::ScopedStopSignals signals;
  SteadyLoopClock clock;
  return loop(clock);
}

}  // namespace

std::string monitor_usage(MonitorKind kind) {
  if (kind == MonitorKind::kDmon) {
    return "usage: gpumon dmon [-i IDS] [-d SEC] [-c N] [-s pucvmet] [-o DT] [-f FILE]\n"
           "  One line per GPU per interval, laid out as nvidia-smi dmon's.\n"
           "  -i, --id IDS      GPUs by index, UUID, PCI bus id or serial, comma-separated\n"
           "  -d, --delay SEC   interval in whole seconds (default 1)\n"
           "  -c, --count N     stop after N samples (default: until Ctrl-C)\n"
           "  -s, --select pucvmet  p power and temperatures, u utilization, c clocks,\n"
           "                    v violations, m memory, e ECC and PCIe replays, t PCIe\n"
           "                    throughput (default puc)\n"
           "  -o, --options DT  D the date, T the time before each line\n"
           "  -f, --filename FILE   write to FILE instead of stdout\n"
           "  A value gpumon does not read (CC memory) is '-'.\n"
           "  For CSV, use gpumon query --query-gpu=FIELDS --format=csv -l SEC.\n";
  }
  return "usage: gpumon pmon [-i IDS] [-d SEC] [-c N] [-s um] [-o DT] [-f FILE]\n"
         "  One line per compute process per GPU per interval (a line of '-' for a GPU with\n"
         "  none), laid out as nvidia-smi pmon's.\n"
         "  -i, --id IDS      GPUs by index, UUID, PCI bus id or serial, comma-separated\n"
         "  -d, --delay SEC   interval in whole seconds, 1 to 10 (default 1)\n"
         "  -c, --count N     stop after N samples (default: until Ctrl-C)\n"
         "  -s, --select um   u utilization (SM and memory, the driver's newest sample of\n"
         "                    the process), m its framebuffer memory (default u)\n"
         "  -o, --options DT  D the date, T the time before each line\n"
         "  -f, --filename FILE   write to FILE instead of stdout\n"
         "  Per-process encoder, decoder, jpg, ofa and CC memory are '-' (not read).\n";
}

Expected<MonitorOptions> parse_monitor_options(MonitorKind kind,
                                               const std::vector<std::string>& args) {
  MonitorOptions o;
  o.kind = kind;
  o.select = kind == MonitorKind::kDmon ? "puc" : "u";
  const std::string cmd(name_of(kind));
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string name = args[i], value;
    bool has_value = false;
    if (const auto eq = name.find('='); name.starts_with("--") && eq != std::string::npos) {
      value = name.substr(eq + 1);
      name.resize(eq);
      has_value = true;
    }
    auto take = [&]() -> bool {
      if (has_value) return true;
      if (i + 1 >= args.size()) return false;
      value = args[++i];
      return true;
    };
    if (name == "-h" || name == "--help") {
      o.help = true;
      return o;
    }
    const bool known = name == "-i" || name == "--id" || name == "-d" || name == "--delay" ||
                       name == "-c" || name == "--count" || name == "-s" || name == "--select" ||
                       name == "-o" || name == "--options" || name == "-f" || name == "--filename";
    if (name == "--format") {
      return usage_error(cmd +
                         ": --format is not supported; for CSV, use gpumon query "
                         "--query-gpu=FIELDS --format=csv -l SEC.");
    }
    if (!known) {
      return usage_error(cmd + ": unknown option '" + args[i] + "' (gpumon " + cmd +
                         " --help lists them).");
    }
    if (!take() || value.empty()) return usage_error(cmd + ": " + name + " needs a value.");
    if (name == "-i" || name == "--id") {
      o.ids = value;
    } else if (name == "-d" || name == "--delay") {
      unsigned seconds = 0;
      const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), seconds);
      const unsigned max = kind == MonitorKind::kPmon ? 10 : 86400;
      if (ec != std::errc() || end != value.data() + value.size() || seconds < 1 || seconds > max) {
        return usage_error(cmd + ": -d takes whole seconds from 1 to " + std::to_string(max) +
                           ", not '" + value + "'.");
      }
      o.delay = std::chrono::seconds(seconds);
    } else if (name == "-c" || name == "--count") {
      auto count = parse_count(value);
      if (!count) return count.error();
      o.count = *count;
    } else if (name == "-s" || name == "--select") {
      auto select =
          kind == MonitorKind::kDmon ? parse_dmon_select(value) : parse_pmon_select(value);
      if (!select) return select.error();
      o.select = *select;
    } else if (name == "-o" || name == "--options") {
      for (char c : value) {
        if (c != 'D' && c != 'T')
          return usage_error(cmd + ": -o takes D and/or T, not '" + value + "'.");
        (c == 'D' ? o.stamp.date : o.stamp.time) = true;
      }
    } else {
      o.file = value;
    }
  }
  return o;
}

int run_monitor_command(MonitorKind kind, const std::vector<std::string>& args, std::ostream& out,
                        std::ostream& err) {
  return detail::run_monitor_command(kind, args, out, err, detail::nvml_environment());
}

namespace detail {

int run_monitor_command(MonitorKind kind, const std::vector<std::string>& args, std::ostream& out,
                        std::ostream& err, const QueryEnvironment& env) {
  try {
    return run(kind, args, out, err, env);
  } catch (const std::exception& e) {  // bad_alloc and the like: report, never crash the caller
    err << "gpumon: " << name_of(kind) << " failed: " << e.what() << "\n";
    return kExitIoError;
  }
}

}  // namespace detail
}  // namespace gpumon::query
