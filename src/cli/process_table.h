// SPDX-License-Identifier: MIT
// The processes table of the snapshot and the live view: GPU, PID, user, GPU memory, CPU %,
// resident memory and command line (last, so cutting lines to the terminal cuts only it).
#pragma once

#include <cstddef>
#include <vector>

#include "cli/snapshot.h"
#include "cli/styled_line.h"

namespace gpumon::cli {

/// A "Processes" title, a heading, one line per process ("No running GPU processes." when
/// none), lines for GPUs whose list could not be read, and a note explaining "[not visible]"
/// rows when there are any. `max_rows` (0: all) bounds the process lines; the rest are
/// summarised in one "... N more" line.
std::vector<StyledLine> process_table(const Snapshot& snap, std::size_t max_rows = 0);

}  // namespace gpumon::cli
