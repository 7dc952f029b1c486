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
  struct R {
    const RankSteps* r;
    double gpu, cpu, n;
  };
  std::vector<R> rs;
  for (const auto& r : v.ranks) {
    if (static_cast<int>(r.steady.size()) < t.min_steps) continue;
    std::vector<double> g, c;
    for (const auto* s : r.steady) {
      c.push_back(s->cpu_step_s);
      if (s->gpu_step_s && std::isfinite(*s->gpu_step_s)) g.push_back(*s->gpu_step_s);
    }
    if (static_cast<int>(g.size()) < t.min_steps) continue;
    rs.push_back({&r, *median_of(g), *median_of(c), static_cast<double>(g.size())});
  }
  if (rs.size() < 2) return;
  std::vector<double> cpus;
  for (const auto& r : rs) cpus.push_back(r.cpu);
  // Collectives make step times equal; without that the ranks do not wait on each other.
  if (coefficient_of_variation(cpus).value_or(1) >= t.imbalance_cv / 2) return;
  const auto slow =
      std::max_element(rs.begin(), rs.end(), [](const R& a, const R& b) { return a.gpu < b.gpu; });
  // The slowest rank must itself keep its GPU busy, else every rank is host-bound.
  if (slow->cpu <= 0 || slow->gpu / slow->cpu < t.launch_gpu_ratio) return;
  Finding f;
  double worst = 1, n = 0;
  for (const auto& r : rs) {
    const double ratio = r.gpu / slow->gpu;
    if (ratio >= t.rank_wait_gpu_ratio) continue;
    f.ranks.push_back(r.r->label);
    if (r.r->info->gpu) f.gpus.push_back(*r.r->info->gpu);
    const auto [t0, t1] = step_span_ms(*r.r);
    widen_range(f, t0, t1);
    if (ratio < worst) worst = ratio, n = r.n;
  }
  if (f.ranks.empty()) return;
  const auto straggler = find_straggler(v, t);
  f.id = "rank_wait";
  f.severity = straggler ? Severity::kInfo : Severity::kWarning;
  f.confidence = confidence_of(n, t.full_confidence_steps, worst, t.rank_wait_gpu_ratio, false);
  f.title = "Ranks wait on another rank";
  f.summary = std::to_string(f.ranks.size()) + " rank(s) use their GPU only " +
              fmt(worst * 100, 0) + "% as long as rank " + std::to_string(slow->r->label) +
              " per step and wait for it in collectives";
  f.add("gpu_time_vs_slowest", worst);
  f.add("slowest_rank", static_cast<double>(slow->r->label));
  f.add("slowest_gpu_step_ms", slow->gpu * 1000);
  f.add("step_ms", slow->cpu * 1000);
  if (straggler) f.add("explained_by", std::string("straggler"));
  f.advice =
      "Even out the work between ranks (same batch size and sequence lengths per rank, "
      "balanced sharding); look at what slows the slowest rank (its GPU's clocks, its data "
      "loader, other processes on its GPU).";
  out.push_back(std::move(f));
}

}  // namespace gpumon::diagnose
