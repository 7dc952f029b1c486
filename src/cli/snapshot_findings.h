// SPDX-License-Identifier: MIT
// The diagnoses one snapshot supports: diagnose() (src/diagnose) over a RunData of the single
// reading of every GPU and its processes. Most rules need minutes of samples or training steps
// and stay silent on one reading; what one reading shows today is a lost GPU (`gpu_lost`).
// The agent and serve diagnose continuously (docs/DIAGNOSES.md, "Live").
//
// Thread-safety: a pure function.
#pragma once

#include <vector>

#include "cli/snapshot.h"

namespace gpumon::cli {

std::vector<SnapshotFinding> snapshot_findings(const Snapshot& snap);

}  // namespace gpumon::cli
