// SPDX-License-Identifier: MIT
// hang: a rank that made no step progress for many times its usual step period (step_period()),
// judged by progress however the rank left:
// - inside the run (it later resumed): warning, "stalled";
// - at its end, critical, "hung": still connected when the data ends; or stopped while silent
//   (disconnected without a bye, left on an uncaught exception or Ctrl-C, or the command
//   `gpumon record` ran was killed or failed), where no checkpoint explains the silence, so the
//   shorter `stopped_limit`;
// - before a clean exit (a bye, the command ended well): warning, a final evaluation or save may
//   explain it, or a hang ended from outside that the process caught.
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "diagnose/rules/rules.h"
#include "diagnose/stats.h"

namespace gpumon::diagnose {

namespace {

// How a rank that left was stopped, when it did not end well: "KeyboardInterrupt" (Ctrl-C),
// an exception's type, "SIGKILL"... "" for a clean bye.
std::string how_stopped(const RunView& v, const RankSteps& r) {
  for (const auto& e : v.run.rank_events) {
    if (e.pid != r.info->pid || e.kind != "error") continue;
    const auto detail = nlohmann::json::parse(e.detail, nullptr, false);
    const auto it = detail.is_object() ? detail.find("exception") : detail.end();
    return it != detail.end() && it->is_string() ? it->get<std::string>() : "an exception";
  }
  if (!r.info->bye_ms) return "a disconnect without a goodbye";
  if (const auto& end = v.run.command_end) {
    if (!end->signal.empty()) return end->signal;
    if (end->exit_status != 0) return "exit status " + std::to_string(end->exit_status);
  }
  return "";
}

}  // namespace

void check_hang(const RunView& v, const Thresholds& t, std::vector<Finding>& out) {
  Finding f;
  double worst_gap = 0, worst_limit = 0, worst_period = 0;
  bool at_end = false, died = false;
  std::string worst_end;  // how the worst gap ended: "" inside the run
  int hung = 0;           // gaps at the end that were not followed by a clean exit
  struct Pending {        // a rank silent at the end, short of the connected floor
    const RankSteps* r;
    double t0_s, t1_s, period, limit;
  };
  std::vector<Pending> silent_at_end;
  auto note = [&](const RankSteps& r, double t0_s, double t1_s, const std::string& end,
                  double period, double limit) {
    const double gap = t1_s - t0_s;
    if (!(gap > limit)) return false;
    if (!std::count(f.ranks.begin(), f.ranks.end(), r.label)) f.ranks.push_back(r.label);
    if (r.info->gpu && !std::count(f.gpus.begin(), f.gpus.end(), *r.info->gpu))
      f.gpus.push_back(*r.info->gpu);
    widen_range(f, std::llround(t0_s * 1000), std::llround(t1_s * 1000));
    at_end = at_end || !end.empty();
    if (!end.empty() && end != "a clean exit") ++hung;
    if (gap > worst_gap)
      worst_gap = gap, worst_limit = limit, worst_period = period, worst_end = end;
    return true;
  };
  for (const auto& r : v.ranks) {
    const auto p = step_period(r, t);
    if (!p) continue;
    for (std::size_t i = 1; i < r.all.size(); ++i)
      note(r, r.all[i - 1]->t_end_s, r.all[i]->t_end_s, "", p->period_s, p->limit_s);
    const double last = r.all.back()->t_end_s;
    const auto left_ms = r.info->bye_ms ? r.info->bye_ms : r.info->disconnect_ms;
    if (left_ms) {
      const double left_s = static_cast<double>(*left_ms) / 1000;
      const std::string how = how_stopped(v, r);
      if (how.empty())
        note(r, last, left_s, "a clean exit", p->period_s, p->limit_s);
      else
        died |= note(r, last, left_s, how, p->period_s, p->stopped_limit_s);
    } else if (v.run.end_ms) {
      // Still connected when the data ends (a live window, a recording stopped): it may be in
      // a checkpoint, so the full limit.
      const double end_s = static_cast<double>(*v.run.end_ms) / 1000;
      if (!note(r, last, end_s, "the end of the data", p->period_s, p->limit_s) &&
          end_s - last > p->stopped_limit_s)
        silent_at_end.push_back({&r, last, end_s, p->period_s, p->stopped_limit_s});
    }
  }
  // A rank of the job was stopped silent: the others silent as long at the end hung with it.
  if (died && v.one_job)
    for (const auto& s : silent_at_end)
      note(*s.r, s.t0_s, s.t1_s, "the end of the data", s.period, s.limit);
  if (f.ranks.empty()) return;
  f.id = "hang";
  f.severity = hung > 0 ? Severity::kCritical : Severity::kWarning;
  f.confidence = confidence_of(1, 1, worst_gap, worst_limit);
  f.title = hung > 0 ? "Training hung" : at_end ? "Training stopped early" : "Training stalled";
  f.summary = "no step for " + fmt(worst_gap, 0) + " s (usual step period " +
              fmt(worst_period * 1000, 0) + " ms)";
  if (worst_end == "a clean exit")
    f.summary +=
        " before the process exited (a final evaluation or save, or a hang the process "
        "was stopped out of)";
  else if (worst_end == "the end of the data")
    f.summary += " until the end of the run";
  else if (!worst_end.empty())
    f.summary += " until the process ended on " + worst_end;
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
  f.advice = v.cpu_only
                 ? "find where the processes wait: py-spy dump --pid PID shows each thread's "
                   "Python stack (a collective waiting on a rank that stopped, a DataLoader "
                   "worker that died, I/O or a lock); set a timeout on "
                   "init_process_group so a lost rank raises instead of hanging"
                 : "A GPU at 100% with no progress is usually a collective waiting on a rank "
                   "that stopped (crashed, stuck in I/O or a deadlock): run with "
                   "NCCL_DEBUG=INFO and TORCH_NCCL_ASYNC_ERROR_HANDLING=1, set a collective "
                   "timeout, and py-spy dump the ranks.";
  out.push_back(std::move(f));
}

}  // namespace gpumon::diagnose
