// SPDX-License-Identifier: MIT
// oom_guard, loader_tuned, loader_limited: what the OOM guard (docs/oom-guard.md) and the
// adaptive loader (docs/adaptive-loader.md) did, from the `action` rank events their ranks sent
// (training/protocol.h's Action). They acted on the run, so each finding says what and why with
// the numbers the action carried; the data wait before and after a retune is measured here from
// the rank's own steps.
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <tuple>

#include "diagnose/rules/rules.h"
#include "training/protocol.h"

namespace gpumon::diagnose {
namespace {

std::vector<const RankAction*> actions_of(const RunView& v, std::string_view prefix) {
  std::vector<const RankAction*> out;
  for (const auto& a : v.actions)
    if (a.action.action.starts_with(prefix)) out.push_back(&a);
  return out;
}

std::string who_of(const training::RankEvent& e) {
  return e.rank ? "rank " + std::to_string(*e.rank) : "pid " + std::to_string(e.pid);
}

// The event's rank (else pid) and the GPU its process maps to, and its time.
void add_event(Finding& f, const RunData& run, const training::RankEvent& e) {
  const std::int64_t label = e.rank.value_or(e.pid);
  if (!std::count(f.ranks.begin(), f.ranks.end(), label)) f.ranks.push_back(label);
  for (const auto& r : run.ranks)
    if (r.pid == e.pid && r.gpu && !std::count(f.gpus.begin(), f.gpus.end(), *r.gpu))
      f.gpus.push_back(*r.gpu);
  widen_range(f, e.time_ms, e.time_ms);
}

// The action's own measured figures (its `evidence` object), under `prefix` so they cannot be
// read as another rule's keys; numbers and words only, at most a dozen.
void add_action_evidence(Finding& f, const training::Action& a, const std::string& prefix) {
  const auto o = nlohmann::json::parse(a.json, nullptr, false);
  if (!o.is_object()) return;
  const auto it = o.find("evidence");
  if (it == o.end() || !it->is_object()) return;
  int n = 0;
  for (const auto& [key, value] : it->items()) {
    if (++n > 12) break;
    if (value.is_number())
      f.add(prefix + key, value.get<double>());
    else if (value.is_string())
      f.add(prefix + key, value.get<std::string>());
  }
}

// The share of CPU step time waiting for data over the steps of the action's process before
// it (`before`) or from it on (from_action_on).
std::optional<double> wait_share(const RunView& v, const RankAction& ra, bool before) {
  training::WaitTally w;
  for (const auto& r : v.ranks) {
    if (r.info->pid != ra.event->pid) continue;
    for (const auto* s : r.all)
      if (from_action_on(*s, ra) != before) w.add(*s);
  }
  return w.share();
}

std::string num(std::optional<std::int64_t> v) {
  return v ? std::to_string(*v) : std::string("?");
}

void check_oom_guard(const RunView& v, std::vector<Finding>& out) {
  const auto acts = actions_of(v, "oom_");
  if (acts.empty()) return;
  Finding f;
  int after_oom = 0, predicted = 0, merges = 0, floors = 0;
  std::string floor_who;
  // Under DDP every rank takes the same action at the same step (one rank's OOM splits them
  // all): an action counts once per step and size, whichever ranks sent it (two halvings in
  // one step are two).
  std::set<std::tuple<std::string, std::string, std::int64_t, std::int64_t>> seen;
  for (const RankAction* ra : acts) {
    const auto& [e, a] = *ra;
    add_event(f, v.run, *e);
    if (a.action == "oom_floor") floor_who += (floor_who.empty() ? "" : ", ") + who_of(*e);
    if (a.step &&
        !seen.emplace(a.action, a.reason.value_or(""), *a.step, a.micro_batch_size.value_or(0))
             .second)
      continue;
    if (a.action == "oom_split") (a.reason == "oom" ? after_oom : predicted) += 1;
    if (a.action == "oom_merge") ++merges;
    if (a.action == "oom_floor") ++floors;
  }
  const int distinct = after_oom + predicted + merges + floors;
  const auto& [last_event, last] = *acts.back();
  f.id = "oom_guard";
  f.severity = after_oom > 0 || floors > 0 ? Severity::kWarning : Severity::kInfo;
  f.confidence = 1;
  f.title = floors                      ? "OOM guard reached its floor"
            : after_oom + predicted > 0 ? "OOM guard split the batch"
                                        : "OOM guard merged micro-batches back";
  std::string did;
  auto part = [&](int n, const std::string& what) {
    if (n) did += (did.empty() ? "" : ", ") + std::to_string(n) + " " + what;
  };
  part(after_oom, "split(s) after a CUDA OOM");
  part(predicted, "split(s) before a predicted OOM");
  part(merges, "merge(s) when headroom returned");
  part(floors, "time(s) at its floor");
  f.summary = "the OOM guard acted " + std::to_string(distinct) + " time(s)" +
              (f.ranks.size() > 1 ? " on " + std::to_string(f.ranks.size()) + " ranks" : "") +
              ": " + did;
  if (floors) f.summary += "; at the floor on " + floor_who + " the OOM was raised as it was";
  if (last.micro_batch_size)
    f.summary += "; micro-batch " + num(last.micro_batch_size) +
                 (last.batch_size ? " of a batch of " + num(last.batch_size) : "") + " on " +
                 who_of(*last_event) + " since step " + num(last.step);
  if (last.summary) f.summary += " (" + *last.summary + ")";
  // The OOMs the guard caught: num_ooms growing in the steps of the ranks whose guard split
  // after one (check_oom leaves them to this finding).
  double caught = 0;
  for (const auto& r : v.ranks) {
    if (!guard_split_after_oom(v, r.info->pid)) continue;
    std::optional<std::int64_t> first, last_ooms;
    for (const auto* s : r.all)
      if (s->num_ooms) last_ooms = s->num_ooms, first = first.value_or(*s->num_ooms);
    if (first && *last_ooms > *first) caught += static_cast<double>(*last_ooms - *first);
  }
  f.add("guard_actions", static_cast<double>(distinct));
  if (caught > 0) f.add("caught_ooms", caught);
  if (after_oom) f.add("oom_splits", static_cast<double>(after_oom));
  if (predicted) f.add("predicted_splits", static_cast<double>(predicted));
  if (merges) f.add("merges", static_cast<double>(merges));
  if (floors) f.add("floors_reached", static_cast<double>(floors));
  if (last.micro_batch_size) f.add("micro_batch_size", static_cast<double>(*last.micro_batch_size));
  if (last.batch_size) f.add("batch_size", static_cast<double>(*last.batch_size));
  add_action_evidence(f, last, "guard_");
  f.advice =
      floors      ? "The guard could not split further: lower min_micro_batch_size if the model "
                    "allows, or make the step smaller (activation checkpointing, mixed precision, a "
                    "shorter sequence); PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True helps when "
                    "free memory is fragmented."
      : after_oom ? "Training went on at the same effective batch, with more, smaller "
                    "micro-batches (slower per step). To win the speed back: activation "
                    "checkpointing or mixed precision, or start at the micro-batch the guard "
                    "settled on."
                  : "Nothing to fix: the guard split before memory ran out and merges back when "
                    "headroom returns.";
  out.push_back(std::move(f));
}

void check_loader(const RunView& v, std::vector<Finding>& out) {
  const auto acts = actions_of(v, "loader_");
  if (acts.empty()) return;
  Finding tuned, limited;
  int retunes = 0, limits = 0;
  const RankAction *first = nullptr, *last = nullptr, *last_limited = nullptr, *prefetch = nullptr;
  for (const RankAction* ra : acts) {
    if (ra->action.action == "loader_limited") {
      add_event(limited, v.run, *ra->event);
      last_limited = ra;
      ++limits;
    } else {
      add_event(tuned, v.run, *ra->event);
      if (ra->action.action == "loader_prefetch") prefetch = ra;
      if (ra->action.action != "loader_retuned") continue;
      ++retunes;
      if (!first) first = ra;
      if (ra->event->pid == first->event->pid) last = ra;  // before and after of one process
    }
  }
  if (!tuned.ranks.empty()) {
    tuned.id = "loader_tuned";
    tuned.severity = Severity::kInfo;
    tuned.confidence = 1;
    tuned.title = "Adaptive loader retuned the DataLoader";
    std::string said;
    if (first) {
      const auto& a = first->action;
      const auto& z = last->action;
      said = "retuned " + who_of(*last->event) + "'s DataLoader " + std::to_string(retunes) +
             " time(s): num_workers " + num(a.previous_num_workers) + " -> " + num(z.num_workers) +
             ", prefetch_factor " +
             (a.previous_prefetch_factor ? num(a.previous_prefetch_factor) : "none") + " -> " +
             num(z.prefetch_factor);
      if (z.num_workers) tuned.add("num_workers", static_cast<double>(*z.num_workers));
      if (a.previous_num_workers)
        tuned.add("previous_num_workers", static_cast<double>(*a.previous_num_workers));
      if (z.prefetch_factor) tuned.add("prefetch_factor", static_cast<double>(*z.prefetch_factor));
      // Data wait before the first retune and after the last, from that rank's own steps.
      const auto before = wait_share(v, *first, true);
      const auto after = wait_share(v, *last, false);
      if (before && after) {
        said += "; data wait " + fmt(*before * 100, 0) + "% -> " + fmt(*after * 100, 0) +
                "% of step time";
        tuned.add("data_wait_share_before", *before);
        tuned.add("data_wait_share_after", *after);
      }
      add_action_evidence(tuned, z, "loader_");
    }
    if (prefetch) {
      said += std::string(said.empty() ? "" : "; ") + "its prefetch stage on " +
              who_of(*prefetch->event) + " at depth " + num(prefetch->action.prefetch_depth);
      if (prefetch->action.prefetch_depth)
        tuned.add("prefetch_depth", static_cast<double>(*prefetch->action.prefetch_depth));
    }
    if (said.empty()) said = "acted " + std::to_string(acts.size()) + " time(s)";
    tuned.summary = "the adaptive loader " + said;
    if (last && last->action.summary) tuned.summary += " (" + *last->action.summary + ")";
    tuned.add("loader_actions", static_cast<double>(acts.size()) - limits);
    tuned.advice =
        "Nothing to fix: the loader changes workers and prefetching between epochs within its "
        "CPU and RAM budgets; start with these values next time to skip the first epochs' "
        "search.";
    out.push_back(std::move(tuned));
  }
  if (last_limited) {
    const auto& a = last_limited->action;
    limited.id = "loader_limited";
    limited.severity = Severity::kWarning;
    limited.confidence = 1;
    const bool budget = a.reason == "budget";
    limited.title = budget ? "Loader workers held back by the CPU or RAM budget"
                           : "More loader workers stopped helping";
    limited.summary = "the adaptive loader left " + who_of(*last_limited->event) +
                      "'s DataLoader at num_workers " + num(a.num_workers) +
                      (budget ? ": its CPU or RAM budget allows no more"
                              : ": more workers did not make the data come faster") +
                      (a.summary ? " (" + *a.summary + ")" : "");
    if (a.num_workers) limited.add("num_workers", static_cast<double>(*a.num_workers));
    if (a.prefetch_factor) limited.add("prefetch_factor", static_cast<double>(*a.prefetch_factor));
    if (const auto after = wait_share(v, *last_limited, false))
      limited.add("data_wait_share_after", *after);
    add_action_evidence(limited, a, "loader_");
    limited.advice =
        budget ? "The budgets keep cores for the training and memory for the node "
                 "(docs/adaptive-loader.md): where the node has room, raise them (reserve_cores, "
                 "ram_fraction); else make each sample cheaper: decoding or augmentation done "
                 "once ahead, smaller samples, or fewer copies held per worker."
               : "The limit is not the worker count: look for a lock or a shared handle in the "
                 "Dataset's __getitem__ (one file opened once and shared, a global lock, a "
                 "single-threaded decoder), slow storage (iostat; copy the data to local disk), "
                 "or decoding that could be done once ahead of training.";
    out.push_back(std::move(limited));
  }
}

}  // namespace

std::optional<LoaderActions> loader_actions(const RunView& v) {
  std::optional<LoaderActions> out;
  for (const RankAction* ra : actions_of(v, "loader_")) {
    const auto& a = ra->action;
    if (!out) out.emplace();
    ++out->actions;
    if (a.num_workers) out->num_workers = a.num_workers;
    if (a.prefetch_factor) out->prefetch_factor = a.prefetch_factor;
    if (a.prefetch_depth) out->prefetch_depth = a.prefetch_depth;
    out->limited = out->limited || a.action == "loader_limited";
  }
  return out;
}

bool guard_split_after_oom(const RunView& v, std::int64_t pid) {
  return std::any_of(v.actions.begin(), v.actions.end(), [&](const RankAction& a) {
    return a.event->pid == pid && a.action.action == "oom_split" && a.action.reason == "oom";
  });
}

const RankAction* last_action(const RunView& v, std::int64_t pid, std::string_view name) {
  const RankAction* out = nullptr;
  for (const auto& a : v.actions)
    if (a.event->pid == pid && a.action.action == name) out = &a;
  return out;
}

bool from_action_on(const training::Step& s, const RankAction& a) {
  return a.action.step ? s.step >= *a.action.step
                       : s.t_start_s * 1000 >= static_cast<double>(a.event->time_ms);
}

void check_actions(const RunView& v, const Thresholds& /*t*/, std::vector<Finding>& out) {
  check_oom_guard(v, out);
  check_loader(v, out);
}

}  // namespace gpumon::diagnose
