// SPDX-License-Identifier: MIT
// The `gpumon` snapshot as text: a header line, a table of GPUs (two lines each), and the
// processes table (process_table.h). A function of the Snapshot and the options only.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "cli/gpu_cells.h"
#include "cli/snapshot.h"
#include "cli/styled_line.h"

namespace gpumon::cli {

struct TextOptions {
  RenderStyle style;       ///< colour and attributes, or none
  std::size_t width = 0;   ///< terminal columns to cut lines to; 0: no limit (not a terminal)
  bool show_uuid = false;  ///< UUIDs identify a machine's GPUs: shown only when asked
  bool show_serial = false;
  std::string version;  ///< gpumon's version, for the header line
  Thresholds thresholds;
};

/// `SIMULATED GPUs — scenario "demo" (gpumon fake NVML; not real hardware)`, as a banner.
StyledLine simulated_banner(const SystemInfo& system);

/// "gpumon 0.1.0  driver 580.159.04  CUDA 13.0  host node01  2026-11-29 18:46:52 UTC".
StyledLine header_line(const Snapshot& snap, const std::string& version);

/// The GPU table: a heading row, then two lines per GPU (one, saying GPU LOST, for a lost GPU),
/// plus an id line per GPU when UUIDs or serials are asked for.
std::vector<StyledLine> gpu_table(const Snapshot& snap, const TextOptions& options);

/// Banner (when simulated), header, GPU table and processes, rendered to text.
std::string format_snapshot_text(const Snapshot& snap, const TextOptions& options);

}  // namespace gpumon::cli
