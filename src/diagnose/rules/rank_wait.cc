// SPDX-License-Identifier: MIT
// rank_wait: ranks whose steps take as long as the slowest rank's but whose GPU works much
// less: they wait in a collective. When one consistent straggler explains it the finding is
// info (the straggler finding is the one to act on).
#include <algorithm>
#include <cmath>

#include "diagnose/rules/rules.h"
#include "diagnose/stats.h"

namespace gpumon::diagnose {

void check_rank_wait(const RunView& v, const Thresholds& t, std::vector<Finding>& out) {
  const auto a = align_gpu_steps(v, t);
  if (a.ranks.empty()) return;
  // Collectives make step times equal; without that the ranks do not wait on each other.
  std::vector<double> cpus;
  for (const auto* r : a.ranks) {
    std::vector<double> c;
    for (const auto* s : r->steady) c.push_back(s->cpu_step_s);
    cpus.push_back(*median_of(c));
  }
  if (coefficient_of_variation(cpus).value_or(1) >= t.imbalance_cv / 2) return;
  // Some rank's GPU is busy in each step (else every rank is host-bound: launch_bound).
  const double busiest = *median_of(a.busiest_share);
  if (busiest < t.launch_gpu_ratio) return;
  Finding f;
  double worst = 1, n = 0;
  for (std::size_t i = 0; i < a.ranks.size(); ++i) {
    const double ratio = *median_of(a.share_of_slowest[i]);
    if (ratio >= t.rank_wait_gpu_ratio) continue;
    f.ranks.push_back(a.ranks[i]->label);
    if (a.ranks[i]->info->gpu) f.gpus.push_back(*a.ranks[i]->info->gpu);
    const auto [t0, t1] = step_span_ms(*a.ranks[i]);
    widen_range(f, t0, t1);
    if (ratio < worst) worst = ratio, n = static_cast<double>(a.share_of_slowest[i].size());
  }
  if (f.ranks.empty()) return;
  const auto straggler = find_straggler(v, t);
  f.id = "rank_wait";
  f.severity = straggler ? Severity::kInfo : Severity::kWarning;
  f.confidence = confidence_of(n, t.full_confidence_steps, worst, t.rank_wait_gpu_ratio, false);
  f.title = "Ranks wait on another rank";
  f.summary = std::to_string(f.ranks.size()) + " rank(s) keep their GPU busy only " +
              fmt(worst * 100, 0) + "% as long as the slowest rank of each step, and wait " +
              "for it in collectives" +
              (straggler ? " (rank " + std::to_string(straggler->rank->label) + " is the straggler)"
                         : " (the slowest rank changes from step to step)");
  f.add("gpu_time_vs_slowest", worst);
  f.add("busiest_gpu_share_of_step", busiest);
  f.add("median_step_ms", *median_of(cpus) * 1000);
  f.add("aligned_steps", n);
  if (straggler) f.add("explained_by", std::string("straggler"));
  f.advice =
      "Even out the work between ranks (same batch size and sequence lengths per rank, "
      "balanced sharding); look at what slows the slowest rank (its GPU's clocks, its data "
      "loader, other processes on its GPU).";
  out.push_back(std::move(f));
}

}  // namespace gpumon::diagnose
