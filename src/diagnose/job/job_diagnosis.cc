// SPDX-License-Identifier: MIT
#include "diagnose/job/job_diagnosis.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "diagnose/rules/rules.h"
#include "diagnose/stats.h"

namespace gpumon::diagnose {
namespace {

const std::string& node_name(const JobRun& job, std::int64_t combined_pid) {
  return job.nodes[std::min(node_of_pid(combined_pid), job.nodes.size() - 1)].name;
}

// "node b GPU 5", or "node b" when the rank's GPU is unknown.
std::string where(const JobRun& job, const RankSteps& r) {
  std::string s = "node " + node_name(job, r.info->pid);
  if (r.info->gpu) s += " GPU " + std::to_string(node_gpu(*r.info->gpu).gpu);
  return s;
}

// The node's own finding `id` that concerns NVML GPU `gpu` (any GPU when nullopt).
const Finding* node_finding(const NodeRun& n, const std::string& id,
                            std::optional<unsigned> gpu = std::nullopt) {
  for (const auto& f : n.diagnosis.findings)
    if (f.id == id && !f.machine && (!gpu || std::count(f.gpus.begin(), f.gpus.end(), *gpu) > 0))
      return &f;
  return nullptr;
}

void check_straggler_rank(JobRun& job, const RunView& v, const Thresholds& t,
                          std::vector<Finding>& out) {
  const auto s = find_straggler(v, t);
  if (!s) return;
  const RankSteps& r = *s->rank;
  const std::size_t k = node_of_pid(r.info->pid);
  NodeRun& node = job.nodes[k];
  const std::optional<unsigned> gpu =
      r.info->gpu ? std::optional<unsigned>(node_gpu(*r.info->gpu).gpu) : std::nullopt;
  Finding f;
  f.id = "straggler";
  f.severity = Severity::kWarning;
  f.ranks.push_back(r.label);
  f.nodes.push_back(node.name);
  const auto [t0, t1] = step_span_ms(r);
  widen_range(f, t0, t1);
  std::string cause = "more work per step on this rank, or a slower GPU";
  std::string advice =
      "Give every rank the same work (batch size, sequence lengths, sharding), and compare this "
      "GPU and node with the others (gpumon doctor on its node's recording alone).";
  if (s->measure == "data_wait_s") {
    cause = "its data loader";
    advice =
        "This rank waits for data much longer than the others: check its loader workers, "
        "its shard of the data set and the storage its node reads from.";
  } else if (throttled_more_than_others(v, r, t)) {
    cause = "its GPU is throttled (node " + node.name + "'s throttled finding)";
    advice = "Its GPU runs below max clocks: cooling or a power cap on node " + node.name + ".";
  } else if (node_finding(node, "foreign_memory", gpu)) {
    cause = "another process shares its GPU";
    advice = "Move the other process off this GPU (node " + node.name + "'s processes).";
  }
  f.confidence =
      confidence_of(s->steps, t.full_confidence_steps, s->consistency, t.straggler_consistency);
  f.title = "Straggler rank " + std::to_string(r.label) + " on node " + node.name;
  describe_straggler(f, *s, " (" + where(job, r) + ")",
                     "the job's other " + std::to_string(v.ranks.size() - 1) + " ranks", cause);
  f.add("node", node.name);
  if (gpu) f.add("gpu", static_cast<double>(*gpu));
  f.advice = advice;
  out.push_back(std::move(f));
  // The node's own straggler finding of this rank says less: the job's replaces it, and the
  // points it took go back to the node's score.
  auto& own = node.diagnosis;
  for (auto it = own.findings.begin(); it != own.findings.end();) {
    if (it->id != "straggler" || !std::count(it->ranks.begin(), it->ranks.end(), r.label)) {
      ++it;
      continue;
    }
    std::erase_if(own.deductions, [&](const Deduction& x) {
      return x.finding == it->id && x.points == it->deduction &&
             x.reason.ends_with(": " + it->summary);
    });
    own.health_score = std::min(100, own.health_score + it->deduction);
    it = own.findings.erase(it);
  }
}

// Per rank, how slow it is: its median GPU step time when every rank measures one, else how
// busy its GPU is over the time every rank trained (lock-step ranks wait for the slowest in
// the collective, so the slow one's GPU works the most). Empty when neither can be judged.
std::pair<std::string, std::vector<double>> rank_slowness(const RunView& v, const Thresholds& t) {
  std::vector<double> gpu_step;
  for (const auto& r : v.ranks) {
    std::vector<double> x;
    for (const auto* s : r.steady)
      if (s->gpu_step_s && std::isfinite(*s->gpu_step_s)) x.push_back(*s->gpu_step_s);
    if (static_cast<int>(x.size()) < t.min_steps) break;
    gpu_step.push_back(*median_of(x));
  }
  if (gpu_step.size() == v.ranks.size()) return {"gpu_step_s", gpu_step};
  std::int64_t t0 = 0, t1 = 0;
  for (std::size_t i = 0; i < v.ranks.size(); ++i) {
    const auto [a, b] = step_span_ms(v.ranks[i]);
    t0 = i ? std::max(t0, a) : a, t1 = i ? std::min(t1, b) : b;
  }
  if (t1 <= t0) return {};
  std::vector<double> sm, util;
  for (const auto& r : v.ranks) {
    const GpuSeries* g = r.info->gpu ? find_gpu(v.run, *r.info->gpu) : nullptr;
    if (!g) return {};
    if (auto x = mean_between(*g, t0, t1, [](const GpuPoint& p) { return p.sm_active; }))
      sm.push_back(*x);
    if (auto x = mean_between(*g, t0, t1, [](const GpuPoint& p) { return p.util_pct; }))
      util.push_back(*x / 100);
  }
  if (sm.size() == v.ranks.size()) return {"sm_active", sm};
  if (util.size() == v.ranks.size()) return {"gpu_util", util};
  return {};
}

void check_straggler_node(const JobRun& job, const RunView& v, const Thresholds& t,
                          std::vector<Finding>& out) {
  if (!v.one_job) return;
  const auto [measure, per_rank] = rank_slowness(v, t);
  if (per_rank.empty()) return;
  std::map<std::size_t, std::vector<double>> by_node;
  for (std::size_t i = 0; i < v.ranks.size(); ++i)
    by_node[node_of_pid(v.ranks[i].info->pid)].push_back(per_rank[i]);
  if (by_node.size() < 2) return;
  // The lower median: a node is slow when most of its ranks are (one slow rank is a straggler).
  std::map<std::size_t, double> value;
  for (auto& [k, x] : by_node) {
    std::sort(x.begin(), x.end());
    value[k] = x[(x.size() - 1) / 2];
  }
  std::vector<std::pair<std::size_t, double>> slow;  // node, ratio to the others' median
  for (const auto& [k, x] : value) {
    std::vector<double> others;
    for (const auto& [j, y] : value)
      if (j != k) others.push_back(y);
    const double rest = *median_of(others);
    if (rest > 0 && x / rest >= t.straggler_factor) slow.emplace_back(k, x / rest);
  }
  if (slow.empty() || (value.size() > 2 && slow.size() * 2 >= value.size())) return;
  Finding f;
  f.id = "straggler_node";
  f.severity = Severity::kWarning;
  std::string names, causes;
  double worst = 0;
  for (const auto& [k, ratio] : slow) {
    const NodeRun& n = job.nodes[k];
    names += (names.empty() ? "" : ", ") + n.name;
    f.nodes.push_back(n.name);
    f.ranks.insert(f.ranks.end(), n.ranks.begin(), n.ranks.end());
    worst = std::max(worst, ratio);
    f.add(n.name + "_vs_other_nodes", ratio);
    std::string cause = "slower GPUs, or more work per step on its ranks";
    if (node_finding(n, "throttled"))
      cause = "its GPUs throttle (its throttled finding)";
    else if (node_finding(n, "foreign_memory"))
      cause = "other processes share its GPUs";
    causes += (causes.empty() ? "" : "; ") + n.name + ": " + cause;
  }
  for (const auto& r : v.ranks) {
    const auto [a, b] = step_span_ms(r);
    widen_range(f, a, b);
  }
  const bool activity = measure != "gpu_step_s";
  f.confidence = std::min(1.0, worst / t.straggler_factor - 0.5);
  f.title = "Straggler node " + names;
  f.summary = "the ranks of node " + names + (activity ? "' GPUs work x" : " take x") +
              fmt(worst, 2) + (activity ? " as much as" : " as long per step as") +
              " the other nodes' (" +
              (measure == "gpu_step_s"  ? "median GPU step time"
               : measure == "sm_active" ? "GPM SM activity"
                                        : "NVML utilization") +
              "): the whole job runs at its pace; likely cause: " + causes;
  f.add("measure", measure);
  f.add("nodes_compared", static_cast<double>(value.size()));
  f.advice =
      "Compare the slow node with the others: its GPUs' clocks and temperatures (gpumon doctor "
      "on its recording), other work on it, and its interconnect; move the job off it, or give "
      "its ranks less work.";
  out.push_back(std::move(f));
}

// A node finding's time range on the reference clock (a node's own diagnosis is on its own).
void widen_by_node(Finding& f, const NodeRun& n, const Finding& x) {
  if (!x.start_ms || !x.end_ms) return;
  const std::int64_t off = n.clock.applied ? std::llround(n.clock.offset_s * 1000) : 0;
  widen_range(f, *x.start_ms - off, *x.end_ms - off);
}

void check_node_throttled(const JobRun& job, std::vector<Finding>& out) {
  std::vector<const NodeRun*> hot;
  for (const auto& n : job.nodes)
    if (node_finding(n, "throttled")) hot.push_back(&n);
  if (hot.empty() || hot.size() == job.nodes.size()) return;
  Finding f;
  f.id = "node_throttled";
  f.severity = Severity::kWarning;
  std::string names;
  for (const auto* n : hot) {
    const Finding* x = node_finding(*n, "throttled");
    names += (names.empty() ? "" : ", ") + n->name;
    f.nodes.push_back(n->name);
    f.confidence = std::max(f.confidence, x->confidence);
    f.add(n->name, x->summary);
    widen_by_node(f, *n, *x);
  }
  f.title = "GPUs throttle on " + std::to_string(hot.size()) + " of " +
            std::to_string(job.nodes.size()) + " nodes";
  f.summary = "the GPUs of node " + names + " run below max clocks and the job's other " +
              std::to_string(job.nodes.size() - hot.size()) +
              " nodes' do not: in a synchronous job every rank waits for the slowest GPU";
  f.advice =
      "Look at the throttled node's cooling and power (its throttled finding says which "
      "cause), or leave it out of the job.";
  out.push_back(std::move(f));
}

struct RankEnd {
  const RankSteps* r = nullptr;
  std::int64_t last_step = 0;
  double last_end_s = 0;
  std::optional<std::int64_t> died_ms;  // left without a clean bye
  std::string how;
};

void check_hang(const JobRun& job, const RunView& v, std::vector<Finding>& out) {
  // A node found the job's ranks hung (not some other job's it also ran).
  const Finding* hung = nullptr;
  const NodeRun* hung_node = nullptr;
  for (const auto& n : job.nodes)
    for (const auto& f : n.diagnosis.findings)
      if (f.id == "hang" && f.severity == Severity::kCritical && !hung &&
          std::any_of(f.ranks.begin(), f.ranks.end(), [&](std::int64_t r) {
            return std::count(n.ranks.begin(), n.ranks.end(), r) > 0;
          }))
        hung = &f, hung_node = &n;
  if (!hung || v.ranks.size() < 2) return;
  bool clocks = true;  // every node on the reference clock: times compare across nodes
  for (const auto& n : job.nodes)
    clocks = clocks && (&n == &job.nodes[job.reference] || n.clock.applied);
  std::vector<RankEnd> ends;
  for (const auto& r : v.ranks) {
    RankEnd e{&r, r.all.back()->step, r.all.back()->t_end_s, std::nullopt, ""};
    for (const auto* s : r.all)
      e.last_step = std::max(e.last_step, s->step),
      e.last_end_s = std::max(e.last_end_s, s->t_end_s);
    for (const auto& ev : v.run.rank_events)
      if (ev.pid == r.info->pid && ev.kind == "error") {
        e.died_ms = ev.time_ms;
        const auto detail = nlohmann::json::parse(ev.detail, nullptr, false);
        const auto it = detail.is_object() ? detail.find("exception") : detail.end();
        e.how = it != detail.end() && it->is_string() ? it->get<std::string>() : "an exception";
        break;
      }
    if (!e.died_ms && r.info->disconnect_ms && !r.info->bye_ms)
      e.died_ms = r.info->disconnect_ms, e.how = "a disconnect without a goodbye";
    ends.push_back(e);
  }
  std::int64_t lo = ends[0].last_step, hi = ends[0].last_step;
  double latest_end = ends[0].last_end_s;
  for (const auto& e : ends)
    lo = std::min(lo, e.last_step), hi = std::max(hi, e.last_step),
    latest_end = std::max(latest_end, e.last_end_s);
  Finding f;
  f.id = "hang";
  f.severity = Severity::kCritical;
  f.title = "Job hung";
  f.confidence = 0.9;
  std::vector<const RankEnd*> first;
  std::string why;
  // 1. A rank that died (the clocks must be set to say which died first across nodes).
  const RankEnd* died = nullptr;
  for (const auto& e : ends)
    if (e.died_ms && (!died || *e.died_ms < *died->died_ms)) died = &e;
  // Without set clocks, deaths on different nodes cannot be ordered.
  if (died && (clocks || std::all_of(ends.begin(), ends.end(), [&](const RankEnd& e) {
                 return !e.died_ms ||
                        node_of_pid(e.r->info->pid) == node_of_pid(died->r->info->pid);
               }))) {
    first.push_back(died);
    why = "it ended on " + died->how + " after step " + std::to_string(died->last_step) +
          ", while the others waited for it";
  } else if (lo < hi) {
    // 2. The ranks steps behind the others.
    for (const auto& e : ends)
      if (e.last_step == lo) first.push_back(&e);
    why = "its last step was " + std::to_string(lo) + " while the others reached step " +
          std::to_string(hi);
  } else if (v.run.end_ms && clocks) {
    // 3. Its GPU idled while the others' spun in the collective (one window of time across
    // nodes: only on set clocks).
    const std::int64_t t0 = std::llround(latest_end * 1000), t1 = *v.run.end_ms;
    std::vector<std::pair<const RankEnd*, double>> util;
    for (const auto& e : ends) {
      const GpuSeries* g = e.r->info->gpu ? find_gpu(v.run, *e.r->info->gpu) : nullptr;
      const auto u =
          g ? mean_between(*g, t0, t1, [](const GpuPoint& p) { return p.util_pct; }) : std::nullopt;
      if (u) util.emplace_back(&e, *u);
    }
    std::vector<double> all;
    for (const auto& [e, u] : util) all.push_back(u);
    const auto mid = median_of(all);
    if (util.size() == ends.size() && mid && *mid >= 50) {
      double idle = 0;
      for (const auto& [e, u] : util)
        if (u < 20) first.push_back(e), idle = std::max(idle, u);
      if (!first.empty() && first.size() * 4 <= ends.size())
        why = "its GPU idled through the hang (" + fmt(idle, 0) +
              "% or less) while the other ranks' GPUs stayed busy (median " + fmt(*mid, 0) +
              "%, waiting in their collective): it never reached the collective";
      else
        first.clear();
    }
  }
  std::string names;
  for (const auto* e : first) {
    f.ranks.push_back(e->r->label);
    const std::string& n = node_name(job, e->r->info->pid);
    if (!std::count(f.nodes.begin(), f.nodes.end(), n)) f.nodes.push_back(n);
    names +=
        (names.empty() ? "" : ", ") + std::to_string(e->r->label) + " (" + where(job, *e->r) + ")";
  }
  if (!first.empty()) {
    f.title = "Job hung: rank " + std::to_string(first[0]->r->label) + " stopped first";
    f.summary = "the job's " + std::to_string(ends.size()) +
                " ranks stopped making progress; rank " + names + " stopped first: " + why;
  } else {
    f.confidence = 0.5;
    f.summary = "the job's " + std::to_string(ends.size()) +
                " ranks stopped making progress after step " + std::to_string(hi) +
                ", all within one step of each other and alike on their GPUs: which rank "
                "stopped first cannot be told from steps or GPU activity";
  }
  for (const auto& n : job.nodes) f.add(n.name + "_hang", node_finding(n, "hang") ? 1.0 : 0.0);
  f.add("last_step_min", static_cast<double>(lo));
  f.add("last_step_max", static_cast<double>(hi));
  widen_by_node(f, *hung_node, *hung);
  f.advice =
      "Look at the rank that stopped first: its node's recording (gpumon doctor), its Python "
      "stack (py-spy dump --pid PID), and its log; run with TORCH_NCCL_TRACE_BUFFER_SIZE set so "
      "NCCL's flight recorder dumps each rank's last collectives, and set a collective timeout "
      "(TORCH_NCCL_ASYNC_ERROR_HANDLING=1) so a lost rank raises instead of hanging.";
  out.push_back(std::move(f));
}

}  // namespace

JobDiagnosis diagnose_job(JobRun& job, const Thresholds& t) {
  JobDiagnosis d;
  const RunView v = make_view(job.combined, t);
  check_straggler_rank(job, v, t, d.across.findings);
  check_straggler_node(job, v, t, d.across.findings);
  check_node_throttled(job, d.across.findings);
  check_hang(job, v, d.across.findings);
  d.across.not_judged = job.not_judged;
  score_findings(d.across, t);
  d.health_score = d.across.health_score;
  for (const auto& n : job.nodes)
    if (n.diagnosis.scored) {
      d.scored = true;
      d.health_score = std::min(d.health_score, n.diagnosis.health_score);
    }
  return d;
}

nlohmann::json job_to_json(const JobRun& job, const JobDiagnosis& d, Severity min_severity) {
  nlohmann::json j = {
      {"schema", 1},
      {"job", job.job_id.empty() ? nlohmann::json() : nlohmann::json(job.job_id)},
      {"world_size", job.world_size ? nlohmann::json(*job.world_size) : nlohmann::json()},
      {"simulated", job.combined.simulated_scenario.empty()
                        ? nlohmann::json()
                        : nlohmann::json(job.combined.simulated_scenario)},
      {"health_score", d.scored ? nlohmann::json(d.health_score) : nlohmann::json()},
      {"clock_reference", job.nodes[job.reference].name}};
  j["nodes"] = nlohmann::json::array();
  for (const auto& n : job.nodes) {
    const auto& c = n.clock;
    nlohmann::json clock = {
        {"applied", c.applied},
        {"offset_s", c.offset_s},
        {"spread_s", c.spread_s ? nlohmann::json(*c.spread_s) : nlohmann::json()},
        {"common_steps", c.common_steps}};
    if (!c.why_not.empty()) clock["why_not"] = c.why_not;
    j["nodes"].push_back(
        {{"name", n.name},
         {"recording", n.source},
         {"ranks", n.ranks},
         {"clock", clock},
         {"diagnosis", to_json(n.diagnosis, n.source, min_severity, n.run.simulated_scenario)}});
  }
  const auto across = to_json(d.across, "job", min_severity, job.combined.simulated_scenario);
  for (const char* key : {"deductions", "not_judged", "findings"}) j[key] = across[key];
  return j;
}

std::string render_job_text(const JobRun& job, const JobDiagnosis& d, Severity min_severity) {
  std::ostringstream o;
  const auto& sim = job.combined.simulated_scenario;
  if (!sim.empty()) o << "SIMULATED GPUs (scenario " << sim << "): not a real run\n";
  std::size_t ranks = 0;
  for (const auto& n : job.nodes) ranks += n.ranks.size();
  o << "gpumon doctor: job " << (job.job_id.empty() ? "(no id)" : job.job_id) << ", "
    << job.nodes.size() << " nodes, " << ranks << " ranks";
  if (job.world_size) o << " of " << *job.world_size;
  o << "\n";
  o << "health score: ";
  if (d.scored)
    o << d.health_score << "/100 (the lowest of the nodes' and the job's own)\n";
  else
    o << "n/a (no data)\n";
  o << "clocks, set to node " << job.nodes[job.reference].name << "'s:\n";
  for (const auto& n : job.nodes) {
    if (&n == &job.nodes[job.reference]) continue;
    const auto& c = n.clock;
    o << "  " << n.name << ": ";
    if (c.applied)
      o << (c.offset_s >= 0 ? "+" : "") << fmt(c.offset_s * 1000, 1) << " ms (spread "
        << fmt(c.spread_s.value_or(0) * 1000, 1) << " ms over " << c.common_steps << " steps)\n";
    else
      o << "as recorded: " << c.why_not << "\n";
  }
  o << "\nacross nodes: health " << d.across.health_score << "/100";
  for (std::size_t i = 0; i < d.across.deductions.size(); ++i)
    o << (i ? ", " : " (") << "-" << d.across.deductions[i].points << " "
      << d.across.deductions[i].finding << (i + 1 == d.across.deductions.size() ? ")" : "");
  o << "\n";
  int shown = 0;
  for (const auto& f : d.across.findings)
    if (f.severity >= min_severity) o << finding_text(f), ++shown;
  if (shown == 0) o << "  no findings across nodes\n";
  if (!d.across.not_judged.empty()) {
    o << "\nnot judged across nodes:\n";
    for (const auto& n : d.across.not_judged) o << "  - " << n.check << ": " << n.reason << "\n";
  }
  for (const auto& n : job.nodes) {
    o << "\n== node " << n.name << " (ranks " << (n.ranks.empty() ? "none" : rank_ranges(n.ranks))
      << ") ==\n";
    o << render_text(n.diagnosis, n.source, min_severity, "");
  }
  return o.str();
}

}  // namespace gpumon::diagnose
