// SPDX-License-Identifier: MIT
// The processes table of the snapshot and the live view: GPU, PID, user, GPU memory, CPU %,
// resident memory and command line (last, so cutting lines to the terminal cuts only it).
#pragma once

#include <cstddef>
#include <vector>

#include "cli/process_view.h"
#include "cli/snapshot.h"
#include "cli/styled_line.h"

namespace gpumon::cli {

/// How the live view lists the processes; the default is the snapshot's plain table.
struct ProcessTableView {
  const std::vector<ProcessLine>* lines = nullptr;  ///< order and tree; null: snap.processes
  std::optional<ProcessKey> selected;               ///< in reverse video, always in the window
  bool util_columns = false;  ///< each process's SM % and memory-util % (NVML's samples)
  bool unicode = true;        ///< tree branches as box drawing, else ASCII
  std::size_t width = 0;      ///< the selected row's bar spans this many columns
};

/// A "Processes" title, a heading, one line per process ("No running GPU processes." when
/// none), lines for GPUs whose list could not be read, and a note explaining "[not visible]"
/// rows when there are any. `max_rows` (0: all) bounds the process lines; the rest are
/// summarised in one "... N more" line. With a selection further down than `max_rows`, the
/// window scrolls so that it is the last row shown.
std::vector<StyledLine> process_table(const Snapshot& snap, std::size_t max_rows = 0,
                                      const ProcessTableView& view = {});

}  // namespace gpumon::cli
