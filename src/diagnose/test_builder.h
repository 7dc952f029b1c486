// SPDX-License-Identifier: MIT
// Helpers the diagnosis tests build RunData with: GPU samples and training steps of given
// shapes, and checks that every finding is sane (no NaN, confidence in 0-1, JSON dumps).
#pragma once

#include <functional>
#include <string>

#include "diagnose/diagnosis.h"
#include "diagnose/run_data.h"

namespace gpumon::diagnose::testing {

inline constexpr std::int64_t kT0Ms = 1764460000000;  // 2025-11-29T23:46:40Z

/// Adds GPU `gpu` (80 GiB, max clock 1980 MHz) with `n` samples every `dt_ms` from kT0Ms, busy
/// and healthy (util 95%, SM active 0.8, 40 GiB used, no clock reasons) before `edit`.
GpuSeries& add_gpu(RunData& run, unsigned gpu, int n, std::int64_t dt_ms = 100,
                   const std::function<void(GpuPoint&, int)>& edit = {});

/// Adds `n` steps of `step_s` each (back to back from kT0Ms) of process `pid` (rank `rank`,
/// device cuda:`rank`), healthy (1% data wait, GPU time 90%, 10 GiB allocated, 12 reserved)
/// before `edit`. A hello precedes them.
void add_rank(RunData& run, std::int64_t pid, std::int64_t rank, std::int64_t world, int n,
              double step_s, const std::function<void(training::Step&, int)>& edit = {});

/// A sample at `t_ms` with nothing known but `util_pct`.
GpuPoint bare_point(std::int64_t t_ms, std::optional<double> util_pct = std::nullopt);

/// Runs diagnose() after finish_run_data() and checks every finding is sane.
Diagnosis run_diagnose(RunData& run, const Thresholds& t = {});
/// The finding with `id` at `min` severity or more, or nullptr.
const Finding* find(const Diagnosis& d, const std::string& id, Severity min = Severity::kWarning);
/// Ids of the findings at warning or above, comma separated (for failure messages).
std::string warnings(const Diagnosis& d);
/// A number of the finding's evidence, or NaN when absent.
double evidence(const Finding& f, const std::string& name);

}  // namespace gpumon::diagnose::testing
