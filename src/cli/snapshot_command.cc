// SPDX-License-Identifier: MIT
#include "cli/snapshot_command.h"

#include "cli/arg_parse.h"
#include "cli/backend_open.h"
#include "cli/rank_rows.h"
#include "cli/snapshot_findings.h"
#include "cli/snapshot_gather.h"
#include "cli/snapshot_json.h"
#include "cli/snapshot_text.h"
#include "cli/version.h"
#include "host/process_inspector.h"

namespace gpumon::cli {

void print_snapshot(GpuBackend& backend, const SnapshotFlags& flags, const Console& console) {
  host::DiskProcFiles proc;
  host::UserNames users;
  host::ProcessInspector inspector(proc, users);
  Snapshot snap = gather_snapshot(backend, inspector, host_name());
  add_ranks(snap, rank_memory_file(console.getenv("GPUMON_AGENT_SOCKET")));
  snap.findings = snapshot_findings(snap);
  if (flags.json) {
    JsonOptions o;
    o.show_uuid = flags.show_uuid;
    o.show_serial = flags.show_serial;
    o.version = version_number();
    console.out << format_snapshot_json(snap, o);
    return;
  }
  TextOptions o;
  const bool color =
      !flags.no_color &&
      color_wanted(console.out_is_tty(), console.getenv("NO_COLOR"), console.getenv("TERM"));
  o.style = RenderStyle{color, color};
  o.width = console.out_columns();
  o.show_uuid = flags.show_uuid;
  o.show_serial = flags.show_serial;
  o.version = version_number();
  console.out << format_snapshot_text(snap, o);
}

std::string open_failure_json(const NvmlOpenError& error) {
  const char* kind = error.kind == NvmlOpenError::Kind::kNoDriver     ? "no_driver"
                     : error.kind == NvmlOpenError::Kind::kBadLibrary ? "bad_library"
                                                                      : "init_failed";
  nlohmann::json o = {{"error", kind},
                      {"message", error.message},
                      {"gpumon_version", version_number()},
                      {"gpus", nlohmann::json::array()},
                      {"processes", nlohmann::json::array()}};
  return o.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

int run_snapshot_command(const std::vector<std::string>& args, const Console& console) {
  CLI::App app("gpumon: one snapshot of every GPU and its processes", "gpumon");
  SnapshotFlags flags;
  app.add_flag("--json", flags.json, "Print one JSON object (base units, missing values null)");
  app.add_flag("--show-uuid", flags.show_uuid, "Show GPU UUIDs (hidden by default)");
  app.add_flag("--show-serial", flags.show_serial, "Show board serial numbers (hidden by default)");
  app.add_flag("--no-color", flags.no_color, "No colour even on a terminal (as NO_COLOR=1)");
  if (auto done = parse_args(app, args, console, "gpumon --help")) return *done;

  NvmlOpenError error;
  auto backend = open_backend(console, &error);
  if (!backend) {
    if (flags.json) console.out << open_failure_json(error);
    return kExitNoGpu;
  }
  print_snapshot(*backend, flags, console);
  console.out.flush();
  return 0;
}

}  // namespace gpumon::cli
