// SPDX-License-Identifier: MIT
// What a diagnosis could and could not judge. A check that could not run (no steps, no allocator
// stats, no GPU time or samples, a rank whose GPU is unknown, too few steps) is listed with why,
// never counted as healthy: the health score covers only the checks that ran. And which GPUs the
// run used: a finding about a GPU no rank of the run uses (a busy, throttled GPU of another job
// beside a CPU run) is the machine's state, reported apart and costing the run no points.
//
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "diagnose/diagnosis.h"
#include "diagnose/rules/rules.h"

namespace gpumon::diagnose {

std::vector<NotJudged> list_not_judged(const RunView& v, const Thresholds& t);

/// The NVML GPUs the run's ranks use; nullopt when that is not known (no training process was
/// seen, so the machine is the run; or a rank's GPU is unknown). Empty for a CPU-only run.
std::optional<std::set<unsigned>> run_gpus(const RunView& v);

}  // namespace gpumon::diagnose
