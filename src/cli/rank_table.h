// SPDX-License-Identifier: MIT
// The attached training ranks' latest step time, data wait and PyTorch memory, per GPU, for
// the snapshot and the live view (allocated and reserved beside the GPU's own readings above).
#pragma once

#include <vector>

#include "cli/snapshot.h"
#include "cli/styled_line.h"

namespace gpumon::cli {

/// A "Training ranks" title, a heading and one line per rank; nothing when no rank is attached.
std::vector<StyledLine> rank_table(const Snapshot& snap);

}  // namespace gpumon::cli
