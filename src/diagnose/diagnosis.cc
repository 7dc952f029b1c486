// SPDX-License-Identifier: MIT
#include "diagnose/diagnosis.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "diagnose/coverage.h"
#include "diagnose/rules/rules.h"
#include "diagnose/stats.h"

namespace gpumon::diagnose {
namespace {

// Findings about the data rather than the run: they cost no points (the run may be fine) but
// say what the score does not cover.
void check_coverage(const RunData& run, Diagnosis& d) {
  if (run.kind == RunData::Kind::kLive) return;  // the window fills as the run goes on
  const bool cut_short = run.kind == RunData::Kind::kRecordingCutShort;
  std::size_t samples = 0;
  for (const auto& g : run.gpus) samples += g.points.size();
  if (samples == 0 && run.steps.empty()) {
    d.scored = false;
    Finding f;
    f.id = "no_data";
    f.severity = Severity::kWarning;
    f.confidence = 1;
    f.title = "No data to diagnose";
    f.summary = cut_short
                    ? "the recording holds no GPU sample and no training step, and has no end "
                      "time: gpumon was stopped (killed?) before it wrote any; no score"
                    : "the recording holds no GPU sample and no training step; no score";
    if (!run.read_warning.empty()) f.summary += "; " + run.read_warning;
    f.advice =
        "record for longer than one sampling interval, and check that gpumon saw the GPUs "
        "(gpumon) or that the training reached the agent (import gpumon)";
    d.findings.insert(d.findings.begin(), std::move(f));
    return;
  }
  if (!cut_short) return;
  Finding f;
  f.id = "recording_cut_short";
  f.severity = Severity::kWarning;
  f.confidence = 1;
  f.title = "Recording cut short";
  f.summary =
      "the recording has no end time: gpumon stopped without closing it (killed, crashed or "
      "lost power), so the findings and the score cover only the data up to " +
      (run.end_ms ? record::format_iso_ms(*run.end_ms) : std::string("its last sample"));
  if (!run.read_warning.empty()) f.summary += "; " + run.read_warning;
  f.start_ms = run.end_ms;
  f.advice =
      "stop gpumon with Ctrl-C or SIGTERM (not SIGKILL) so it closes the recording; what "
      "happened after the last sample is not known";
  d.findings.insert(d.findings.begin(), std::move(f));
}

// Steps the recording refused (record/step_shares.h): the findings about those ranks saw only
// the steps kept.
void check_steps_lost(const RunData& run, Diagnosis& d) {
  std::map<std::int64_t, std::pair<std::optional<std::int64_t>, std::int64_t>> by_pid;
  for (const auto& e : run.rank_events) {
    if (e.kind != "steps_lost") continue;
    const auto detail = nlohmann::json::parse(e.detail, nullptr, false);
    const auto steps = detail.is_object() ? detail.value("steps", nlohmann::json()) : nullptr;
    auto& [rank, lost] = by_pid[e.pid];
    if (e.rank) rank = e.rank;
    if (steps.is_number_integer()) lost += steps.get<std::int64_t>();
  }
  if (by_pid.empty()) return;
  Finding f;
  f.id = "steps_not_recorded";
  f.severity = Severity::kWarning;
  f.confidence = 1;
  f.title = "Training steps not recorded";
  std::int64_t total = 0;
  std::string who;
  for (const auto& [pid, lost] : by_pid) {
    total += lost.second;
    if (!who.empty()) who += ", ";
    who +=
        std::to_string(lost.second) + " of " +
        (lost.first ? "rank " + std::to_string(*lost.first) + " (pid " + std::to_string(pid) + ")"
                    : "pid " + std::to_string(pid));
    if (lost.first)
      f.ranks.push_back(*lost.first);
    else
      f.pids.push_back(pid);
  }
  std::sort(f.ranks.begin(), f.ranks.end());
  f.summary = "the recording refused " + std::to_string(total) + " training steps (" + who +
              "): the findings about those processes cover only the steps kept";
  f.add("steps_lost", static_cast<double>(total));
  f.advice =
      "a process that sends more steps than its share of the recording queue loses the rest "
      "(docs/recording.md); send fewer, larger steps (gpumon.step() once per optimizer step), or "
      "record to a faster disk when the queue was full";
  d.findings.insert(d.findings.begin(), std::move(f));
}

}  // namespace

void score_findings(Diagnosis& d, const Thresholds& t) {
  for (auto& f : d.findings) {
    f.confidence = unit_clamp(f.confidence);
    std::sort(f.gpus.begin(), f.gpus.end());
    std::sort(f.ranks.begin(), f.ranks.end());
    // Evidence never carries a NaN or infinity (JSON has no such number).
    std::erase_if(f.evidence, [](const auto& e) {
      const auto* x = std::get_if<double>(&e.second);
      return x && !std::isfinite(*x);
    });
    const double base = f.severity == Severity::kCritical  ? t.critical_points
                        : f.severity == Severity::kWarning ? t.warning_points
                                                           : 0;
    f.deduction = f.machine ? 0 : static_cast<int>(std::lround(base * f.confidence));
  }
  std::stable_sort(d.findings.begin(), d.findings.end(), [](const Finding& a, const Finding& b) {
    if (a.severity != b.severity) return a.severity > b.severity;
    return a.deduction > b.deduction;
  });
  int total = 0;
  d.deductions.clear();
  for (const auto& f : d.findings) {
    if (f.deduction <= 0) continue;
    total += f.deduction;
    d.deductions.push_back({f.id, f.deduction,
                            std::string(severity_name(f.severity)) + " at confidence " +
                                fmt(f.confidence, 2) + ": " + f.summary});
  }
  d.health_score = std::clamp(100 - total, 0, 100);
}

Diagnosis diagnose(const RunData& run, const Thresholds& t) {
  Diagnosis d;
  const RunView v = make_view(run, t);
  check_data_loader_stall(v, t, d.findings);
  check_launch_bound(v, t, d.findings);
  check_throttled(v, t, d.findings);
  check_rank_wait(v, t, d.findings);
  check_memory(v, t, d.findings);
  check_multi_gpu(v, t, d.findings);
  check_hang(v, t, d.findings);
  check_hardware(v, t, d.findings);
  check_run_end(v, t, d.findings);
  check_actions(v, t, d.findings);
  check_host_memory_leak(v, t, d.findings);
  check_cpu_straggler(v, t, d.findings);
  check_step_pauses(v, t, d.findings);
  d.not_judged = list_not_judged(v, t);
  // Findings about GPUs none of the run's ranks uses (not idle_gpu: a GPU the job could use and
  // leaves idle is the job's) are the machine's state.
  const auto used = run_gpus(v);
  for (auto& f : d.findings)
    f.machine =
        used && !f.gpus.empty() && f.ranks.empty() && f.id != "idle_gpu" &&
        std::none_of(f.gpus.begin(), f.gpus.end(), [&](unsigned g) { return used->count(g) > 0; });
  // Rank-less processes are labelled by pid in the rules (a rank number no rank has).
  std::set<std::int64_t> rank_numbers, rankless_pids;
  for (const auto& r : run.ranks)
    if (r.rank)
      rank_numbers.insert(*r.rank);
    else
      rankless_pids.insert(r.pid);
  for (auto& f : d.findings) {
    for (auto it = f.ranks.begin(); it != f.ranks.end();) {
      if (rankless_pids.count(*it) && !rank_numbers.count(*it)) {
        f.pids.push_back(*it);
        it = f.ranks.erase(it);
      } else {
        ++it;
      }
    }
    std::sort(f.pids.begin(), f.pids.end());
  }
  score_findings(d, t);
  check_coverage(run, d);
  if (run.kind != RunData::Kind::kLive) check_steps_lost(run, d);
  return d;
}

}  // namespace gpumon::diagnose
