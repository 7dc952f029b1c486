// SPDX-License-Identifier: MIT
// run_failed: the run did not end well (docs/DIAGNOSES.md): the command `gpumon record` ran
// exited with a status other than 0, or a signal killed it (and whether the kernel's OOM killer
// killed a process in gpumon's memory cgroup meanwhile: host memory ran out), or a training
// process said it is ending on an uncaught exception (an `error` rank event). The last step each
// rank recorded says how far the training got. run_interrupted (info): it was stopped with
// Ctrl-C, which is no failure; hang says whether it had stopped making progress first.
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "diagnose/rules/rules.h"
#include "record/recording_types.h"

namespace gpumon::diagnose {

namespace {

// A text field of a recorded detail; "" when absent or not text (a recording is input too).
std::string text_of(const nlohmann::json& detail, const char* key) {
  const auto it = detail.find(key);
  return it != detail.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// "rank 0 raised ValueError: bad value (train.py:42 in step_fn) at step 7", from the error
// events the Python client sends for an uncaught exception (docs/python.md "Protocol").
std::string raised(const RunView& v) {
  std::string said;
  for (const auto& e : v.run.rank_events) {
    if (e.kind != "error") continue;
    const auto detail = nlohmann::json::parse(e.detail, nullptr, false);
    if (!detail.is_object()) continue;
    const std::string exception = text_of(detail, "exception");
    if (exception.empty() || exception == "KeyboardInterrupt") continue;  // stopped, not failed
    std::string one =
        (e.rank ? "rank " + std::to_string(*e.rank) : "pid " + std::to_string(e.pid)) + " raised " +
        exception;
    if (const auto m = text_of(detail, "message"); !m.empty())
      one += ": " + (m.size() > 200 ? m.substr(0, 200) + "..." : m);
    if (const auto w = text_of(detail, "where"); !w.empty()) one += " (" + w + ")";
    if (const auto s = detail.find("step"); s != detail.end() && s->is_number_integer())
      one += " at step " + std::to_string(s->get<std::int64_t>());
    said += (said.empty() ? "" : "; ") + one;
  }
  return said;
}

// A rank said it ended on KeyboardInterrupt (Ctrl-C).
bool interrupted(const RunView& v) {
  return std::any_of(v.run.rank_events.begin(), v.run.rank_events.end(), [](const auto& e) {
    if (e.kind != "error") return false;
    const auto detail = nlohmann::json::parse(e.detail, nullptr, false);
    return detail.is_object() && text_of(detail, "exception") == "KeyboardInterrupt";
  });
}

}  // namespace

void check_run_end(const RunView& v, const Thresholds& /*t*/, std::vector<Finding>& out) {
  const auto& end = v.run.command_end;
  const bool command_failed = end && (end->exit_status != 0 || !end->signal.empty());
  const std::string exceptions = raised(v);
  // Ctrl-C: SIGINT (Python re-raises it on an uncaught KeyboardInterrupt), 130, or the ranks'
  // own word. A person stopped it: worth knowing (hang says whether it was stuck), no failure.
  const bool ctrl_c =
      exceptions.empty() &&
      (command_failed ? end->signal == "SIGINT" || end->exit_status == 130 : interrupted(v));
  if (!command_failed && exceptions.empty() && !ctrl_c) return;
  Finding f;
  f.id = ctrl_c ? "run_interrupted" : "run_failed";
  f.severity = ctrl_c ? Severity::kInfo : Severity::kCritical;
  f.confidence = 1;
  f.title = ctrl_c ? "Run stopped with Ctrl-C" : "Run failed";
  const bool oom_killed = command_failed && end->oom_kills && *end->oom_kills > 0;
  if (ctrl_c) {
    f.summary = command_failed ? "the command ended on SIGINT (exit status " +
                                     std::to_string(end->exit_status) + ")"
                               : "a rank ended on KeyboardInterrupt";
  } else if (command_failed && !end->signal.empty()) {
    f.summary = "the command was killed by " + end->signal + " (exit status " +
                std::to_string(end->exit_status) + ")";
    if (oom_killed)
      f.summary += ": the kernel's OOM killer killed " + std::to_string(*end->oom_kills) +
                   " process(es) in its memory cgroup during the run (host memory ran out)";
  } else if (command_failed) {
    f.summary = "the command exited with status " + std::to_string(end->exit_status);
  }
  if (!exceptions.empty()) f.summary += (f.summary.empty() ? "" : "; ") + exceptions;
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
  if (end) f.add("exit_status", static_cast<double>(end->exit_status));
  if (end && end->oom_kills) f.add("oom_kills", static_cast<double>(*end->oom_kills));
  f.advice = ctrl_c ? "nothing to fix if you meant to stop it; a hang finding says whether "
                      "training had stopped making progress first"
             : oom_killed
                 ? "the host ran out of memory: lower DataLoader num_workers or prefetch_factor, "
                   "look for a growing Dataset or cache in the training process, or ask the "
                   "scheduler for more memory; `dmesg | grep -i oom` names the process killed"
             : command_failed && !end->signal.empty()
                 ? "something sent the signal: a scheduler's time or memory limit, a preemption, "
                   "or a person; the scheduler's log and `dmesg` say which"
                 : "read the command's output for the error (its traceback); the findings before "
                   "it may show what led there";
  out.push_back(std::move(f));
}

}  // namespace gpumon::diagnose
