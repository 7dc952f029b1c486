// SPDX-License-Identifier: MIT
// hang: a rank that made no step progress for many times its usual step period, either inside
// the run (it later resumed: warning) or at its end while still connected (critical).
#include <algorithm>
#include <cmath>

#include "diagnose/rules/rules.h"
#include "diagnose/stats.h"

namespace gpumon::diagnose {

void check_hang(const RunView& v, const Thresholds& t, std::vector<Finding>& out) {
  Finding f;
  double worst_gap = 0, worst_limit = 0, worst_period = 0;
  bool at_end = false;
  for (const auto& r : v.ranks) {
    if (r.all.size() < 5) continue;  // no usual step time yet
    std::vector<double> periods;
    for (std::size_t i = 1; i < r.all.size(); ++i)
      periods.push_back(r.all[i]->t_end_s - r.all[i - 1]->t_end_s);
    // The usual period of steady steps (warm-up ones are slow), at least the step itself.
    const std::size_t from = std::min<std::size_t>(
        periods.size() - 1, static_cast<std::size_t>(std::max(t.warmup_steps, 0)));
    const double period = *median_of(
        std::vector<double>(periods.begin() + static_cast<std::ptrdiff_t>(from), periods.end()));
    const double limit = std::max(t.hang_step_factor * period, t.hang_min_s);
    auto note = [&](double t0_s, double t1_s, bool end) {
      const double gap = t1_s - t0_s;
      if (!(gap > limit)) return;
      if (!std::count(f.ranks.begin(), f.ranks.end(), r.label)) f.ranks.push_back(r.label);
      if (r.info->gpu && !std::count(f.gpus.begin(), f.gpus.end(), *r.info->gpu))
        f.gpus.push_back(*r.info->gpu);
      widen_range(f, std::llround(t0_s * 1000), std::llround(t1_s * 1000));
      at_end = at_end || end;
      if (gap > worst_gap) worst_gap = gap, worst_limit = limit, worst_period = period;
    };
    for (std::size_t i = 1; i < r.all.size(); ++i)
      note(r.all[i - 1]->t_end_s, r.all[i]->t_end_s, false);
    // At the end: a rank that said bye finished; one that disconnected hung until then.
    if (!r.info->bye_ms) {
      const auto end_ms = r.info->disconnect_ms ? r.info->disconnect_ms : v.run.end_ms;
      if (end_ms) note(r.all.back()->t_end_s, static_cast<double>(*end_ms) / 1000, true);
    }
  }
  if (f.ranks.empty()) return;
  f.id = "hang";
  f.severity = at_end ? Severity::kCritical : Severity::kWarning;
  f.confidence = confidence_of(1, 1, worst_gap, worst_limit);
  f.title = at_end ? "Training hung" : "Training stalled";
  f.summary = "no step for " + fmt(worst_gap, 0) + " s (usual step period " +
              fmt(worst_period * 1000, 0) + " ms)" + (at_end ? " until the end of the run" : "");
  f.add("gap_s", worst_gap);
  f.add("usual_period_s", worst_period);
  f.add("limit_s", worst_limit);
  f.add("at_end", at_end ? 1.0 : 0.0);
  for (unsigned gpu : f.gpus)
    if (const auto* g = find_gpu(v.run, gpu))
      if (auto u = mean_between(*g, *f.start_ms, *f.end_ms,
                                [](const GpuPoint& p) { return p.util_pct; }))
        f.add("gpu" + std::to_string(gpu) + "_util_during_gap_pct", *u);
  f.advice =
      "A GPU at 100% with no progress is usually a collective waiting on a rank that stopped "
      "(crashed, stuck in I/O or a deadlock): run with NCCL_DEBUG=INFO and "
      "TORCH_NCCL_ASYNC_ERROR_HANDLING=1, set a collective timeout, and py-spy dump the ranks.";
  out.push_back(std::move(f));
}

}  // namespace gpumon::diagnose
