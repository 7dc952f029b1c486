// SPDX-License-Identifier: MIT
// step_pauses: the tail of the step-time distribution. A rank whose steady steps are short but
// where a few take far longer (a checkpoint every N steps, evaluation, logging, a garbage
// collection, a loader that refills a shard) can lose most of its wall time in those few, while
// the median step looks healthy. Per rank, the time between consecutive step ends: intervals
// past max(pause_factor x the usual period, usual + pause_min_s) are pauses (below the hang
// limit: longer silences are hang's); their excess over the usual period, as a share of the
// wall time, is what they cost. Each pause's excess is split into data wait, the step body
// (the timed step without its data wait) and time between the timed steps, so the advice fits;
// pauses that are data wait on a rank data_loader_stall already named are left to it.
#include <algorithm>
#include <array>
#include <cmath>

#include "diagnose/rules/rules.h"
#include "diagnose/stats.h"

namespace gpumon::diagnose {

namespace {

struct Pauses {
  const RankSteps* rank = nullptr;
  double share = 0, usual_s = 0, median_pause_s = 0, wall_s = 0, steps = 0;
  std::vector<std::int64_t> at;                  // the paused steps' numbers
  std::array<double, 3> excess{};                // data wait, step body, between steps
  std::optional<double> period_steps, period_s;  // when the pauses are regular
  bool wait_unknown = false;                     // a step's data wait was not measured
};

// The usual spacing of `v` (sorted) when at least `regular_share` of the gaps lie within 10 %
// (and one unit) of their median; nullopt for irregular pauses.
std::optional<double> regular_spacing(const std::vector<double>& v, double regular_share) {
  if (v.size() < 3) return std::nullopt;
  std::vector<double> gaps;
  for (std::size_t i = 1; i < v.size(); ++i) gaps.push_back(v[i] - v[i - 1]);
  const double m = *median_of(gaps);
  const double slack = std::max(0.1 * m, 1.0);
  const auto near =
      std::count_if(gaps.begin(), gaps.end(), [&](double g) { return std::fabs(g - m) <= slack; });
  if (static_cast<double>(near) < regular_share * static_cast<double>(gaps.size()))
    return std::nullopt;
  return m;
}

std::optional<Pauses> pauses_of(const RankSteps& r, const Thresholds& t) {
  const auto p = step_period(r, t);
  if (!p || static_cast<int>(r.steady.size()) < t.min_steps || !(p->period_s > 0))
    return std::nullopt;
  const double usual = p->period_s;
  const double floor = std::max(t.pause_factor * usual, usual + t.pause_min_s);
  // The usual parts of a step, from which a pause's excess is measured.
  std::vector<double> waits, bodies, betweens;
  bool wait_unknown = false;
  for (std::size_t i = 1; i < r.steady.size(); ++i) {
    const auto& s = *r.steady[i];
    // A scoped step (`with mon.step():`) starts after its batch was fetched: its data wait
    // lies in the gap before it, not in its body. As much of the wait as the gap holds is
    // counted there.
    const double gap = std::max(s.t_start_s - r.steady[i - 1]->t_end_s, 0.0);
    // An unknown wait counts as none: its time stays in the body (the summary says so).
    const double wait = s.data_wait_s.value_or(0);
    const double wait_outside = std::min(wait, gap);
    waits.push_back(wait);
    bodies.push_back(std::max(s.cpu_step_s - (wait - wait_outside), 0.0));
    if (!s.data_wait_s) wait_unknown = true;
    betweens.push_back(gap - wait_outside);
  }
  const std::array<double, 3> usual_part{*median_of(waits), *median_of(bodies),
                                         *median_of(betweens)};
  Pauses out;
  out.rank = &r;
  out.wait_unknown = wait_unknown;
  out.usual_s = usual;
  std::vector<double> pause_s, pause_t;
  double excess = 0;
  for (std::size_t i = 1; i < r.steady.size(); ++i) {
    const double d = r.steady[i]->t_end_s - r.steady[i - 1]->t_end_s;
    if (!(d > 0) || d > p->limit_s) continue;  // a silence past the hang limit is hang's
    out.wall_s += d;
    out.steps += 1;
    if (d <= floor) continue;
    excess += d - usual;
    pause_s.push_back(d);
    pause_t.push_back(r.steady[i]->t_end_s);
    out.at.push_back(r.steady[i]->step);
    const std::array<double, 3> parts{waits[i - 1], bodies[i - 1], betweens[i - 1]};
    for (std::size_t k = 0; k < 3; ++k) out.excess[k] += std::max(parts[k] - usual_part[k], 0.0);
  }
  if (static_cast<int>(pause_s.size()) < t.pause_min_count || !(out.wall_s > 0))
    return std::nullopt;
  out.share = excess / out.wall_s;
  out.median_pause_s = *median_of(pause_s);
  std::vector<double> numbers(out.at.begin(), out.at.end());
  out.period_steps = regular_spacing(numbers, t.pause_regular_share);
  if (out.period_steps) out.period_s = regular_spacing(pause_t, t.pause_regular_share);
  return out;
}

}  // namespace

void check_step_pauses(const RunView& v, const Thresholds& t, std::vector<Finding>& out) {
  std::optional<Pauses> worst;
  Finding f;
  for (const auto& r : v.ranks) {
    const auto p = pauses_of(r, t);
    if (!p || p->share < t.pause_share) continue;
    f.ranks.push_back(r.label);
    if (r.info->gpu && !std::count(f.gpus.begin(), f.gpus.end(), *r.info->gpu))
      f.gpus.push_back(*r.info->gpu);
    const auto [t0, t1] = step_span_ms(r);
    widen_range(f, t0, t1);
    if (!worst || p->share > worst->share) worst = p;
  }
  if (!worst) return;
  const Pauses& w = *worst;
  static constexpr std::array<const char*, 3> kWhere{"data_wait", "step_body", "between_steps"};
  const std::size_t where = static_cast<std::size_t>(
      std::max_element(w.excess.begin(), w.excess.end()) - w.excess.begin());
  // Pauses of data wait on a rank data_loader_stall reported (it runs first) are its "few long
  // waits": one finding, not two; on a rank whose loader the adaptive loader retuned, they are
  // the epochs before the retune, which loader_tuned reports.
  if (where == 0 && last_action(v, w.rank->info->pid, "loader_retuned")) return;
  if (where == 0)
    for (const auto& o : out)
      if (o.id == "data_loader_stall" && std::count(o.ranks.begin(), o.ranks.end(), w.rank->label))
        return;
  f.id = "step_pauses";
  f.severity = w.share >= t.pause_critical_share ? Severity::kCritical : Severity::kWarning;
  f.confidence = confidence_of(w.steps, t.full_confidence_steps, w.share, t.pause_share);
  f.title = "Long pauses between steps";
  f.summary = fmt(w.share * 100, 0) + "% of the wall time on " + who(*w.rank) + " went to " +
              std::to_string(w.at.size()) + " pauses of about " + fmt(w.median_pause_s, 2) + " s";
  if (w.period_steps)
    f.summary += ", every " + fmt(*w.period_steps, 0) + " steps" +
                 (w.period_s ? " (every " + fmt(*w.period_s, 1) + " s)" : "");
  f.summary +=
      std::string(where == 0   ? ", waiting for data"
                  : where == 1 ? (w.wait_unknown ? ", inside the step (its data wait was not "
                                                   "measured: the loader's, or the step's own)"
                                                 : ", inside the step")
                               : ", between the timed steps") +
      "; the usual step takes " + fmt(w.usual_s * 1000, 1) + " ms";
  f.add("pause_share", w.share);
  f.add("pauses", static_cast<double>(w.at.size()));
  f.add("median_pause_s", w.median_pause_s);
  f.add("usual_step_ms", w.usual_s * 1000);
  if (w.period_steps) f.add("period_steps", *w.period_steps);
  if (w.period_s) f.add("period_s", *w.period_s);
  f.add("where", std::string(kWhere[where]));
  f.add("first_paused_step", static_cast<double>(w.at.front()));
  f.add("steps", w.steps);
  f.advice =
      where == 0
          ? kBurstyLoaderAdvice
          : (w.period_steps
                 ? std::string("something runs every ") + fmt(*w.period_steps, 0) + " steps: "
                 : std::string("something stops training now and then: ")) +
                "a checkpoint (save asynchronously: torch.distributed.checkpoint.async_save, or "
                "copy the state and write it on a thread), evaluation or logging (less often; "
                "avoid .item() and printing tensors in the loop), or Python's garbage "
                "collector (gc.freeze() after setup); py-spy record shows which";
  if (where == 1 && w.wait_unknown)
    f.advice += "; or the data loader: iterate it as mon.wrap(loader) so gpumon times the fetch";
  out.push_back(std::move(f));
}

}  // namespace gpumon::diagnose
