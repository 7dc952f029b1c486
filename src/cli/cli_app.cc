// SPDX-License-Identifier: MIT
#include "cli/cli_app.h"

#include <exception>

#include "cli/arg_parse.h"
#include "cli/snapshot_command.h"
#include "cli/version.h"
#include "cli/watch_command.h"

#ifdef GPUMON_HAVE_QUERY
#include "query/monitor_command.h"
#include "query/query_command.h"
#endif
#include "cli/agent_command.h"
#ifdef GPUMON_HAVE_RECORD
#include "cli/record_command.h"
#endif
#ifdef GPUMON_HAVE_REPORT
#include "report/report_command.h"
#endif
#ifdef GPUMON_HAVE_DIAGNOSE
#include "cli/doctor_command.h"
#endif
#ifdef GPUMON_HAVE_SERVE
#include "cli/serve_command.h"
#endif

namespace gpumon::cli {
namespace {

// `query`, `dmon` and `pmon`: nvidia-smi's scripting modes.
int run_query(const std::string& name, const std::vector<std::string>& args,
              const Console& console) {
#ifdef GPUMON_HAVE_QUERY
  if (name == "dmon" || name == "pmon") {
    const auto kind = name == "dmon" ? query::MonitorKind::kDmon : query::MonitorKind::kPmon;
    return query::run_monitor_command(kind, args, console.out, console.err);
  }
  return query::run_query_command(args, console.out, console.err);
#else
  (void)args;
  console.err << "gpumon: `" << name << "` is not part of this build (src/query was not built)\n";
  return kExitUsage;
#endif
}

// `record` and `export` need SQLite and zstd (src/record builds only where they are
// found).
int run_recording_command(const std::string& name, const std::vector<std::string>& args,
                          const Console& console) {
  if (name == "agent") return run_agent_command(args, console);
#ifdef GPUMON_HAVE_RECORD
  return name == "record" ? run_record_command(args, console) : run_export(args, console);
#else
  (void)args;
  console.err << "gpumon: `" << name
              << "` is not part of this build (install libsqlite3-dev libzstd-dev and rebuild)\n";
  return kExitUsage;
#endif
}

// `report` needs src/record (SQLite and zstd).
int run_report(const std::vector<std::string>& args, const Console& console) {
#ifdef GPUMON_HAVE_REPORT
  return report::run_report_command(args, console.out, console.err);
#else
  (void)args;
  console.err << "gpumon: `report` is not part of this build (install libsqlite3-dev libzstd-dev "
                 "and rebuild)\n";
  return kExitUsage;
#endif
}

// `doctor` needs src/diagnose (built wherever src/record is).
int run_doctor(const std::vector<std::string>& args, const Console& console) {
#ifdef GPUMON_HAVE_DIAGNOSE
  return run_doctor_command(args, console.out, console.err);
#else
  (void)args;
  console.err << "gpumon: `doctor` is not part of this build (install libsqlite3-dev libzstd-dev "
                 "and rebuild)\n";
  return kExitUsage;
#endif
}

// `serve` needs src/http and src/exporter (libmicrohttpd, GnuTLS, libcrypt, yaml-cpp).
int run_serve(const std::vector<std::string>& args, const Console& console) {
#ifdef GPUMON_HAVE_SERVE
  return run_serve_command(args, console);
#else
  (void)args;
  console.err << "gpumon: `serve` is not part of this build: it was built without the exporter "
                 "(install libmicrohttpd-dev libgnutls28-dev libcrypt-dev libyaml-cpp-dev, then "
                 "configure and build again)\n";
  return kExitUsage;
#endif
}

int dispatch(const std::vector<std::string>& args, const Console& console) {
  if (args.empty()) return run_snapshot_command(args, console);
  const std::string& first = args.front();
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  if (first == "query" || first == "dmon" || first == "pmon")
    return run_query(first, rest, console);
  // nvidia-smi -L and -q, word for word.
  if (first == "-L" || first == "--list-gpus" || first == "-q" || first == "--query")
    return run_query("query", args, console);
  if (first == "record" || first == "export" || first == "agent")
    return run_recording_command(first, rest, console);
  if (first == "report") return run_report(rest, console);
  if (first == "doctor") return run_doctor(rest, console);
  if (first == "serve") return run_serve(rest, console);
  if (first == "watch" || first == "-w" || first == "--watch")
    return run_watch_command(rest, console);
  if (first == "--version" || first == "-V" || first == "version") {
    console.out << version_text() << '\n';
    return 0;
  }
  if (first == "--help" || first == "-h" || first == "help") {
    console.out << help_text();
    return 0;
  }
  if (!first.empty() && first[0] == '-') return run_snapshot_command(args, console);
  console.err << "gpumon: unknown command '" << first
              << "'. Commands: watch, query, dmon, pmon, record, export, report, doctor, serve, "
                 "agent (run 'gpumon --help').\n";
  return kExitUsage;
}

}  // namespace

std::string help_text() {
  return version_text() + R"( - GPU monitoring for PyTorch training

Usage:
  gpumon [--json] [--show-uuid] [--show-serial] [--no-color]
                      one snapshot of every GPU and its processes
  gpumon watch [--interval S] [--count N] [--no-color]
                      the live view, refreshed every S seconds (default 1; q quits)
                      (also: gpumon -w, gpumon --watch)
  gpumon query --query-gpu=FIELDS --format=csv[,noheader][,nounits] [-l S | -lms MS] [-i IDS]
  gpumon query --query-compute-apps=FIELDS --format=csv
                      nvidia-smi compatible queries (gpumon query --help)
  gpumon -L           the GPUs with their UUIDs, as nvidia-smi -L
  gpumon -q [-d MEMORY,UTILIZATION,...] [-i IDS]
                      nvidia-smi -q's report, or some of its sections
  gpumon dmon [-s pucvmet] [-d S] [-c N] [-i IDS] [-o DT]
  gpumon pmon [-s um] [-d S] [-c N] [-i IDS] [-o DT]
                      nvidia-smi dmon / pmon: scrolling device and process tables
  gpumon record [-o FILE] [--interval MS] [-- COMMAND ARGS...]
                      record every GPU into FILE until COMMAND exits (or Ctrl-C)
  gpumon export FILE --format csv|jsonl [--metrics a,b] [--gpu N]
                      a recording's samples back, exactly (docs/recording.md)
                      (--table steps: the training steps of `import gpumon`;
                      --list-metrics: the metric names)
  gpumon agent [--socket PATH] [-o FILE] [--interval MS] [--exit-when-idle S]
                      the per-node agent `import gpumon` talks to (docs/python.md)
  gpumon report FILE [-o REPORT.html] [--baseline OTHER] [--force]
                      one self-contained HTML page of a recording (docs/report.md)
  gpumon doctor FILE [--json] [--min-severity info|warning|critical]
                      a recording's findings and health score (docs/DIAGNOSES.md)
  gpumon doctor|report NODE1 NODE2 ... | FOLDER
                      one job's recordings from its nodes, joined on one clock
  gpumon serve [--listen ADDR] [--interval MS] [--compat dcgm] [--uuid] [--pcie]
               [--web.config.file FILE] [--record FILE] [--agent-socket PATH | --no-agent]
                      Prometheus /metrics, JSON API and live web dashboard over HTTP; hosts
                      the agent socket, so training steps appear as gpumon_training_*
                      (default http://127.0.0.1:9477/; gpumon serve --help)
  gpumon --version
  gpumon --help

Snapshot options:
  --json              one JSON object: base units, missing values null
  --show-uuid         show GPU UUIDs (hidden by default: they identify the machine)
  --show-serial       show board serial numbers (hidden by default)
  --no-color          no colour (colour is used only on a terminal, without NO_COLOR,
                      and with TERM other than dumb)

Missing values print as N/A (no value now), n/s (not supported), denied (no permission),
lost (GPU lost) or err; never as 0.

Environment:
  GPUMON_NVML_LIBRARY   NVML library to load instead of the driver's libnvidia-ml.so.1
  GPUMON_FAKE_SCENARIO  scenario for gpumon's fake NVML (simulated GPUs), e.g. demo
  NO_COLOR              no colour when set

Exit status: 0 ok; 1 no NVIDIA driver or NVML failure; 2 bad command line or internal error.
See docs/cli.md.
)";
}

int run_cli(const std::vector<std::string>& args, const Console& console) {
  try {
    return dispatch(args, console);
  } catch (const std::exception& e) {
    console.err << "gpumon: " << e.what() << '\n';
  } catch (...) {
    console.err << "gpumon: unexpected error\n";
  }
  return kExitUsage;
}

}  // namespace gpumon::cli
