// SPDX-License-Identifier: MIT
#include "diagnose/job/clock_offset.h"

#include <cmath>
#include <map>

#include "diagnose/rules/rules.h"
#include "diagnose/stats.h"

namespace gpumon::diagnose {
namespace {

// Step number -> the median over the node's ranks of that step's end (s).
std::map<std::int64_t, double> step_ends(const std::vector<training::Step>& steps) {
  std::map<std::int64_t, std::vector<double>> ends;
  for (const auto& s : steps)
    if (std::isfinite(s.t_end_s)) ends[s.step].push_back(s.t_end_s);
  std::map<std::int64_t, double> out;
  for (auto& [step, v] : ends) out.emplace(step, *median_of(v));
  return out;
}

// The usual time per step: the median over neighbouring known steps of their ends' distance
// per step number (the loader may have kept every k-th step only).
std::optional<double> step_period(const std::map<std::int64_t, double>& ends) {
  std::vector<double> per_step;
  for (auto it = ends.begin(), next = std::next(it); it != ends.end() && next != ends.end();
       ++it, ++next)
    if (next->second > it->second)
      per_step.push_back((next->second - it->second) /
                         static_cast<double>(next->first - it->first));
  return median_of(per_step);
}

}  // namespace

ClockOffset estimate_clock_offset(const std::vector<training::Step>& node,
                                  const std::vector<training::Step>& reference, int min_steps,
                                  double max_spread_share) {
  ClockOffset c;
  const auto mine = step_ends(node), ref = step_ends(reference);
  c.period_s = step_period(ref);
  std::vector<double> diffs;
  for (const auto& [step, end] : mine)
    if (const auto it = ref.find(step); it != ref.end()) diffs.push_back(end - it->second);
  c.common_steps = static_cast<std::int64_t>(diffs.size());
  if (c.common_steps < std::max(min_steps, 1)) {
    c.why_not = "only " + std::to_string(c.common_steps) + " step numbers seen on both nodes (" +
                std::to_string(min_steps) + " needed)";
    return c;
  }
  const double offset = *median_of(diffs);
  std::vector<double> dev;
  for (double d : diffs) dev.push_back(std::fabs(d - offset));
  c.spread_s = median_of(dev);
  if (!c.period_s || !(*c.spread_s <= max_spread_share * *c.period_s)) {
    c.why_not = "the nodes' step ends do not line up (spread " + fmt(*c.spread_s * 1000, 1) +
                " ms" + (c.period_s ? " over a " + fmt(*c.period_s * 1000, 1) + " ms step" : "") +
                "): the ranks are not in lock step, so their steps cannot set the clocks";
    return c;
  }
  c.offset_s = offset;
  c.applied = true;
  return c;
}

}  // namespace gpumon::diagnose
