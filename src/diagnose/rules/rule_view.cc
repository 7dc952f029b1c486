// SPDX-License-Identifier: MIT
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "diagnose/rules/rules.h"
#include "diagnose/stats.h"

namespace gpumon::diagnose {

namespace {

bool is_one_job(const std::vector<RankSteps>& ranks) {
  if (ranks.size() < 2) return false;
  std::set<std::int64_t> seen;
  std::int64_t latest_start = 0, earliest_end = 0;
  bool first = true;
  for (const auto& r : ranks) {
    if (!r.info->rank || r.info->world_size.value_or(1) <= 1 || !seen.insert(*r.info->rank).second)
      return false;
    const auto [t0, t1] = step_span_ms(r);
    latest_start = first ? t0 : std::max(latest_start, t0);
    earliest_end = first ? t1 : std::min(earliest_end, t1);
    first = false;
  }
  return latest_start < earliest_end;
}

}  // namespace

RunView make_view(const RunData& run, const Thresholds& t) {
  RunView v{run, {}, {}};
  std::map<std::int64_t, std::vector<const training::Step*>> by_pid;
  for (const auto& s : run.steps)
    if (std::isfinite(s.t_start_s) && std::isfinite(s.t_end_s) && std::isfinite(s.cpu_step_s) &&
        s.cpu_step_s >= 0 &&
        (!s.data_wait_s || (std::isfinite(*s.data_wait_s) && *s.data_wait_s >= 0)))
      by_pid[s.pid].push_back(&s);
  for (const auto& info : run.ranks) {
    auto it = by_pid.find(info.pid);
    if (it == by_pid.end()) continue;
    RankSteps r;
    r.info = &info;
    r.all = std::move(it->second);
    const auto skip =
        std::min<std::size_t>(static_cast<std::size_t>(std::max(t.warmup_steps, 0)), r.all.size());
    r.steady.assign(r.all.begin() + static_cast<std::ptrdiff_t>(skip), r.all.end());
    r.label = info.rank.value_or(info.pid);
    v.ranks.push_back(std::move(r));
  }
  std::sort(v.ranks.begin(), v.ranks.end(),
            [](const RankSteps& a, const RankSteps& b) { return a.label < b.label; });
  for (const auto& e : run.rank_events)
    if (auto a = training::action_of(e)) v.actions.push_back({&e, std::move(*a)});
  v.one_job = is_one_job(v.ranks);
  v.cpu_only = !v.ranks.empty() && std::all_of(v.ranks.begin(), v.ranks.end(), [](const auto& r) {
    return r.info->device == std::optional<std::string>("cpu");
  });
  return v;
}

training::WaitTally wait_tally(const std::vector<const training::Step*>& steps) {
  training::WaitTally w;
  for (const auto* s : steps) w.add(*s);
  return w;
}

std::pair<std::int64_t, std::int64_t> step_span_ms(const RankSteps& r) {
  if (r.all.empty()) return {0, 0};
  return {std::llround(r.all.front()->t_start_s * 1000),
          std::llround(r.all.back()->t_end_s * 1000)};
}

std::string fmt(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string who(const RankSteps& r) {
  return (r.info->rank ? "rank " : "pid ") + std::to_string(r.label);
}

std::string fmt_bytes(double bytes) {
  if (std::fabs(bytes) >= kGiB) return fmt(bytes / kGiB, 2) + " GiB";
  return fmt(bytes / kMiB, 0) + " MiB";
}

std::optional<StepPeriod> step_period(const RankSteps& r, const Thresholds& t) {
  if (r.all.size() < 5) return std::nullopt;  // no usual step time yet
  std::vector<double> periods;
  for (std::size_t i = 1; i < r.all.size(); ++i)
    periods.push_back(r.all[i]->t_end_s - r.all[i - 1]->t_end_s);
  // Steady steps only (warm-up ones are slow), when there are any.
  const std::size_t from = std::min<std::size_t>(
      periods.size() - 1, static_cast<std::size_t>(std::max(t.warmup_steps, 0)));
  StepPeriod p;
  p.period_s = *median_of(
      std::vector<double>(periods.begin() + static_cast<std::ptrdiff_t>(from), periods.end()));
  p.limit_s = std::max(t.hang_step_factor * p.period_s, t.hang_min_s);
  p.stopped_limit_s = std::max(t.hang_step_factor * p.period_s, t.hang_dead_min_s);
  return p;
}

void widen_range(Finding& f, std::int64_t t0, std::int64_t t1) {
  f.start_ms = std::min(f.start_ms.value_or(t0), t0);
  f.end_ms = std::max(f.end_ms.value_or(t1), t1);
}

}  // namespace gpumon::diagnose
