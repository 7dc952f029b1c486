// SPDX-License-Identifier: MIT
// run_failed: the command `gpumon record` ran did not end well (docs/DIAGNOSES.md): it exited
// with a status other than 0, or a signal killed it, and with SIGKILL whether the kernel's OOM
// killer killed a process in gpumon's memory cgroup meanwhile (host memory ran out). The last
// step each rank recorded says how far the training got.
#include <algorithm>
#include <cmath>

#include "diagnose/rules/rules.h"
#include "record/recording_types.h"

namespace gpumon::diagnose {

void check_run_end(const RunView& v, const Thresholds& /*t*/, std::vector<Finding>& out) {
  const auto& end = v.run.command_end;
  if (!end || (end->exit_status == 0 && end->signal.empty())) return;
  Finding f;
  f.id = "run_failed";
  f.severity = Severity::kCritical;
  f.confidence = 1;
  f.title = "Run failed";
  const bool oom_killed = end->oom_kills && *end->oom_kills > 0;
  if (!end->signal.empty()) {
    f.summary = "the command was killed by " + end->signal + " (exit status " +
                std::to_string(end->exit_status) + ")";
    if (oom_killed)
      f.summary += ": the kernel's OOM killer killed " + std::to_string(*end->oom_kills) +
                   " process(es) in its memory cgroup during the run (host memory ran out)";
  } else {
    f.summary = "the command exited with status " + std::to_string(end->exit_status);
  }
  // How far it got: each rank's last step.
  std::string last;
  for (const auto& r : v.ranks) {
    if (r.all.empty()) continue;
    const training::Step& s = *r.all.back();
    last += (last.empty() ? "" : ", ") + who(r) + " at step " + std::to_string(s.step) + " (" +
            record::format_iso_ms(std::llround(s.t_end_s * 1000)) + ")";
    f.ranks.push_back(r.label);
    if (r.info->gpu && !std::count(f.gpus.begin(), f.gpus.end(), *r.info->gpu))
      f.gpus.push_back(*r.info->gpu);
    widen_range(f, std::llround(s.t_end_s * 1000), std::llround(s.t_end_s * 1000));
  }
  f.summary += last.empty() ? "; no training step was recorded" : "; last steps: " + last;
  f.add("exit_status", static_cast<double>(end->exit_status));
  if (end->oom_kills) f.add("oom_kills", static_cast<double>(*end->oom_kills));
  f.advice = oom_killed
                 ? "the host ran out of memory: lower DataLoader num_workers or prefetch_factor, "
                   "look for a growing Dataset or cache in the training process, or ask the "
                   "scheduler for more memory; `dmesg | grep -i oom` names the process killed"
             : !end->signal.empty()
                 ? "something sent the signal: a scheduler's time or memory limit, a preemption, "
                   "or a person; the scheduler's log and `dmesg` say which"
                 : "read the command's output for the error (its traceback); the findings before "
                   "it may show what led there";
  out.push_back(std::move(f));
}

}  // namespace gpumon::diagnose
