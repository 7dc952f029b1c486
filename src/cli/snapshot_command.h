// SPDX-License-Identifier: MIT
// `gpumon [--json] [--show-uuid] [--show-serial] [--no-color]`: one snapshot of every GPU.
#pragma once

#include <string>
#include <vector>

#include "cli/console.h"
#include "gpu/gpu_backend.h"
#include "gpu/nvml_backend.h"

namespace gpumon::cli {

struct SnapshotFlags {
  bool json = false;
  bool show_uuid = false;
  bool show_serial = false;
  bool no_color = false;
};

/// Parses the snapshot's flags, opens NVML and prints. Exit status: 0 printed, 1 no GPUs could
/// be opened (no driver: the message says how to try simulated GPUs), 2 bad arguments.
int run_snapshot_command(const std::vector<std::string>& args, const Console& console);

/// The --json answer when NVML cannot be opened: {"error": "no_driver" | "bad_library" |
/// "init_failed", "message": ..., "gpus": [], "processes": []}.
std::string open_failure_json(const NvmlOpenError& error);

/// Gathers and prints one snapshot from an open backend (text or JSON per `flags`).
void print_snapshot(GpuBackend& backend, const SnapshotFlags& flags, const Console& console);

}  // namespace gpumon::cli
