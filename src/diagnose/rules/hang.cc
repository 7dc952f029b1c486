// SPDX-License-Identifier: MIT
// hang: a rank that made no step progress for many times its usual step period, either inside
// the run (it later resumed: warning) or at its end (critical): still connected when the data
// ends, or disconnected without a bye (killed or crashed while silent, a shorter floor).
#include <algorithm>
#include <cmath>

#include "diagnose/rules/rules.h"
#include "diagnose/stats.h"

namespace gpumon::diagnose {

void check_hang(const RunView& v, const Thresholds& t, std::vector<Finding>& out) {
  Finding f;
  double worst_gap = 0, worst_limit = 0, worst_period = 0;
  bool at_end = false, died = false;
  struct Pending {  // a rank silent at the end, short of the connected floor
    const RankSteps* r;
    double t0_s, t1_s, period, limit;
  };
  std::vector<Pending> silent_at_end;
  auto note = [&](const RankSteps& r, double t0_s, double t1_s, bool end, double period,
                  double limit) {
    const double gap = t1_s - t0_s;
    if (!(gap > limit)) return false;
    if (!std::count(f.ranks.begin(), f.ranks.end(), r.label)) f.ranks.push_back(r.label);
    if (r.info->gpu && !std::count(f.gpus.begin(), f.gpus.end(), *r.info->gpu))
      f.gpus.push_back(*r.info->gpu);
    widen_range(f, std::llround(t0_s * 1000), std::llround(t1_s * 1000));
    at_end = at_end || end;
    if (gap > worst_gap) worst_gap = gap, worst_limit = limit, worst_period = period;
    return true;
  };
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
    const double dead_limit = std::max(t.hang_step_factor * period, t.hang_dead_min_s);
    for (std::size_t i = 1; i < r.all.size(); ++i)
      note(r, r.all[i - 1]->t_end_s, r.all[i]->t_end_s, false, period, limit);
    // At the end: a rank that said bye finished. One that disconnected without a bye was killed
    // or crashed while silent: the lower floor. One still connected when the data ends (a live
    // window, a recording stopped) may be in a checkpoint: the full floor.
    if (r.info->bye_ms) continue;
    const double last = r.all.back()->t_end_s;
    if (r.info->disconnect_ms) {
      const double end_s = static_cast<double>(*r.info->disconnect_ms) / 1000;
      died |= note(r, last, end_s, true, period, dead_limit);
    } else if (v.run.end_ms) {
      const double end_s = static_cast<double>(*v.run.end_ms) / 1000;
      if (!note(r, last, end_s, true, period, limit) && end_s - last > dead_limit)
        silent_at_end.push_back({&r, last, end_s, period, dead_limit});
    }
  }
  // A rank of the job died silent: the others silent as long at the end hung with it.
  if (died && v.one_job)
    for (const auto& p : silent_at_end) note(*p.r, p.t0_s, p.t1_s, true, p.period, p.limit);
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
  f.add("died_silent", died ? 1.0 : 0.0);
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
