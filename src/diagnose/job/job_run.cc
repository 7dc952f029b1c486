// SPDX-License-Identifier: MIT
#include "diagnose/job/job_run.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>

namespace gpumon::diagnose {
namespace {

constexpr std::int64_t kCoarseMs = 1000;

// The job ids the node's ranks named.
std::set<std::string> job_ids(const RunData& run) {
  std::set<std::string> ids;
  for (const auto& r : run.ranks)
    if (r.hello && !r.hello->job.id.empty()) ids.insert(r.hello->job.id);
  return ids;
}

bool in_job(const RankInfo& r, const std::string& job_id) {
  return job_id.empty() || !r.hello || r.hello->job.id.empty() || r.hello->job.id == job_id;
}

std::string stem(const std::string& path) {
  return std::filesystem::path(path).stem().string();
}

std::string list(const std::set<std::string>& s) {
  std::string out;
  for (const auto& x : s) out += (out.empty() ? "" : ", ") + x;
  return out;
}

void shift_times(RunData& r, double offset_s) {
  const std::int64_t ms = std::llround(offset_s * 1000);
  if (ms == 0 && offset_s == 0) return;
  for (auto& g : r.gpus)
    for (auto& p : g.points) p.t_ms -= ms;
  for (auto& e : r.events) e.time_ms -= ms;
  for (auto& p : r.processes) p.first_seen_ms -= ms, p.last_seen_ms -= ms;
  for (auto& s : r.steps) s.received_ms -= ms, s.t_start_s -= offset_s, s.t_end_s -= offset_s;
  for (auto& e : r.rank_events) e.time_ms -= ms;
  for (auto& s : r.process_samples) s.time_ms -= ms;
  for (auto& k : r.ranks)
    for (auto* t : {&k.hello_ms, &k.bye_ms, &k.disconnect_ms})
      if (*t) **t -= ms;
  if (r.start_ms) *r.start_ms -= ms;
  if (r.end_ms) *r.end_ms -= ms;
}

std::int64_t combined_pid(std::size_t node, std::int64_t pid) {
  return (static_cast<std::int64_t>(node) << 32) | (pid & 0xffffffff);
}
unsigned combined_gpu(std::size_t node, unsigned gpu) {
  return static_cast<unsigned>(node) * kNodeGpuStride + gpu % kNodeGpuStride;
}

// Moves node `k`'s data of the job's processes into `into`, on the reference clock.
void move_into(RunData& into, NodeRun& n, std::size_t k, const std::set<std::int64_t>& pids) {
  RunData& r = n.run;
  // The node keeps its own ranks and span, on its own clock (its diagnosis is on it too).
  auto own_ranks = r.ranks;
  const auto own_start = r.start_ms, own_end = r.end_ms;
  if (n.clock.applied) shift_times(r, n.clock.offset_s);
  for (auto& g : r.gpus) {
    g.gpu = combined_gpu(k, g.gpu);
    into.gpus.push_back(std::move(g));
  }
  for (auto& e : r.events) e.gpu = combined_gpu(k, e.gpu), into.events.push_back(e);
  // NVML's process lists stay with the node: their pids are the node's, and the node's own
  // diagnosis has judged them (foreign processes, memory).
  for (auto& s : r.steps)
    if (pids.count(s.pid)) s.pid = combined_pid(k, s.pid), into.steps.push_back(std::move(s));
  for (auto& e : r.rank_events)
    if (pids.count(e.pid)) e.pid = combined_pid(k, e.pid), into.rank_events.push_back(std::move(e));
  for (auto& s : r.process_samples)
    if (pids.count(s.pid)) s.pid = combined_pid(k, s.pid), into.process_samples.push_back(s);
  for (auto& info : r.ranks) {
    if (!pids.count(info.pid)) continue;
    info.pid = combined_pid(k, info.pid);
    if (info.gpu) info.gpu = combined_gpu(k, *info.gpu);
    into.ranks.push_back(std::move(info));
  }
  if (r.start_ms) into.start_ms = std::min(into.start_ms.value_or(*r.start_ms), *r.start_ms);
  if (r.end_ms) into.end_ms = std::max(into.end_ms.value_or(*r.end_ms), *r.end_ms);
  if (r.kind == RunData::Kind::kRecordingCutShort) into.kind = r.kind;
  r.ranks = std::move(own_ranks), r.start_ms = own_start, r.end_ms = own_end;
  r.gpus.clear(), r.events.clear(), r.steps.clear();
  r.rank_events.clear(), r.process_samples.clear();
  r.gpus.shrink_to_fit(), r.steps.shrink_to_fit(), r.process_samples.shrink_to_fit();
}

}  // namespace

std::string rank_ranges(const std::vector<std::int64_t>& ranks) {
  std::string s;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    s += (s.empty() ? "" : ",") + std::to_string(ranks[i]);
    if (j > i) s += "-" + std::to_string(ranks[j]);
    i = j + 1;
  }
  return s.empty() ? "none" : s;
}

NodeRun make_node(RunData run, std::string source, const Thresholds& t) {
  NodeRun n;
  n.diagnosis = diagnose(run, t);
  for (auto& g : run.gpus) coarsen_points(g, kCoarseMs);
  n.source = std::move(source);
  n.run = std::move(run);
  return n;
}

std::variant<JobRun, std::string> join_nodes(std::vector<NodeRun> nodes, const Thresholds& t) {
  if (nodes.empty()) return std::string("no recordings to join");
  JobRun job;
  // The job: the id every node that named one shares.
  std::optional<std::set<std::string>> common;
  std::string named;  // "a.gpumon: 4711; b.gpumon: 4712"
  for (const auto& n : nodes) {
    const auto ids = job_ids(n.run);
    if (ids.empty()) continue;
    named += (named.empty() ? "" : "; ") + n.source + ": " + list(ids);
    if (!common) {
      common = ids;
    } else {
      std::set<std::string> both;
      std::set_intersection(common->begin(), common->end(), ids.begin(), ids.end(),
                            std::inserter(both, both.end()));
      common = std::move(both);
    }
  }
  if (common && common->empty())
    return "these recordings are of different jobs (" + named +
           "): give the recordings of one job's nodes";
  if (common) job.job_id = *common->begin();
  if (common && common->size() > 1)
    job.not_judged.push_back(
        {"job", "every node ran ranks of jobs " + list(*common) + "; compared: " + job.job_id});

  // Each rank of the job by its newest process: a rank that restarted (torchrun's restarts, an
  // elastic job that moved it to another node) keeps its latest; two processes of one rank at
  // the same time are the same node given twice, or two runs of the job. A rank whose hello
  // named no job is taken as the job's (an older client).
  struct Member {
    std::size_t node;
    std::int64_t pid;
    double from_s, to_s;  // its steps' span, on its node's clock
  };
  std::map<std::int64_t, std::vector<Member>> by_rank;
  for (std::size_t k = 0; k < nodes.size(); ++k) {
    const auto& n = nodes[k];
    int others = 0;
    std::map<std::int64_t, std::pair<double, double>> span;  // by pid
    for (const auto& st : n.run.steps)
      if (std::isfinite(st.t_start_s) && std::isfinite(st.t_end_s)) {
        auto [it, fresh] = span.try_emplace(st.pid, st.t_start_s, st.t_end_s);
        if (!fresh)
          it->second = {std::min(it->second.first, st.t_start_s),
                        std::max(it->second.second, st.t_end_s)};
      }
    for (const auto& r : n.run.ranks) {
      if (!r.rank) continue;  // not a rank: nothing to compare across nodes
      if (!in_job(r, job.job_id)) {
        ++others;
        continue;
      }
      const auto it = span.find(r.pid);
      const double from =
          it != span.end() ? it->second.first : static_cast<double>(r.hello_ms.value_or(0)) / 1000;
      by_rank[*r.rank].push_back({k, r.pid, from, it != span.end() ? it->second.second : from});
      if (r.world_size)
        job.world_size = std::max(job.world_size.value_or(*r.world_size), *r.world_size);
    }
    if (others > 0)
      job.not_judged.push_back(
          {"processes of other jobs",
           n.source + ": " + std::to_string(others) + " rank(s) of another job left out"});
  }
  constexpr double kOverlapS = 5;  // more than clocks of one cluster are apart
  std::vector<std::set<std::int64_t>> pids(nodes.size());
  for (auto& [rank, members] : by_rank) {
    std::sort(members.begin(), members.end(),
              [](const Member& a, const Member& b) { return a.from_s < b.from_s; });
    for (std::size_t i = 1; i < members.size(); ++i)
      if (members[i].from_s < members[i - 1].to_s - kOverlapS)
        return "rank " + std::to_string(rank) + " ran in " + nodes[members[i - 1].node].source +
               " and in " + nodes[members[i].node].source +
               " at the same time: the same node given twice, or two runs of the job";
    const Member& kept = members.back();
    pids[kept.node].insert(kept.pid);
    nodes[kept.node].ranks.push_back(rank);
    if (members.size() > 1)
      job.not_judged.push_back(
          {"rank " + std::to_string(rank) + " restarted",
           std::to_string(members.size() - 1) +
               " earlier process(es) of it left out; compared: its latest, pid " +
               std::to_string(kept.pid) + " in " + nodes[kept.node].source});
  }
  for (auto& n : nodes) std::sort(n.ranks.begin(), n.ranks.end());

  // Names: the host, else the file where hosts repeat or are unknown; unique either way.
  std::map<std::string, int> uses;
  for (auto& n : nodes) {
    n.name = n.run.hostname;
    if (n.name.empty())
      for (const auto& r : n.run.ranks)
        if (r.hello && r.hello->hostname && n.name.empty()) n.name = *r.hello->hostname;
    ++uses[n.name];
  }
  for (auto& n : nodes)
    if (n.name.empty() || uses[n.name] > 1) n.name = stem(n.source);
  std::map<std::string, int> seen;
  for (auto& n : nodes)
    if (const int k = seen[n.name]++; k > 0) n.name += "#" + std::to_string(k + 1);

  // In the order of their lowest rank; the reference is rank 0's node, else the first.
  std::vector<std::size_t> order(nodes.size());
  for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const auto& x = nodes[a].ranks;
    const auto& y = nodes[b].ranks;
    if (x.empty() != y.empty()) return y.empty();
    return !x.empty() && x.front() < y.front();
  });
  {
    std::vector<NodeRun> sorted;
    std::vector<std::set<std::int64_t>> sorted_pids;
    for (std::size_t k : order)
      sorted.push_back(std::move(nodes[k])), sorted_pids.push_back(std::move(pids[k]));
    nodes = std::move(sorted), pids = std::move(sorted_pids);
  }
  job.reference = 0;

  // Clocks against the reference, from the job's steps.
  auto job_steps = [&](std::size_t k) {
    std::vector<training::Step> steps;
    for (const auto& st : nodes[k].run.steps)
      if (pids[k].count(st.pid)) steps.push_back(st);
    return steps;
  };
  const auto ref_steps = job_steps(job.reference);
  for (std::size_t k = 0; k < nodes.size(); ++k) {
    if (k == job.reference) continue;
    nodes[k].clock = estimate_clock_offset(job_steps(k), ref_steps, t.min_steps);
    if (!nodes[k].clock.applied)
      job.not_judged.push_back(
          {"clock of " + nodes[k].name,
           nodes[k].clock.why_not +
               "; its times are compared as recorded, so which rank stopped first is judged "
               "by step numbers alone"});
  }
  job.combined.source = "job";
  job.combined.kind = RunData::Kind::kRecording;
  for (std::size_t k = 0; k < nodes.size(); ++k) {
    if (job.combined.simulated_scenario.empty())
      job.combined.simulated_scenario = nodes[k].run.simulated_scenario;
    move_into(job.combined, nodes[k], k, pids[k]);
  }
  std::stable_sort(job.combined.steps.begin(), job.combined.steps.end(),
                   [](const auto& a, const auto& b) { return a.t_end_s < b.t_end_s; });
  std::stable_sort(job.combined.rank_events.begin(), job.combined.rank_events.end(),
                   [](const auto& a, const auto& b) { return a.time_ms < b.time_ms; });
  if (job.world_size && static_cast<std::int64_t>(by_rank.size()) < *job.world_size)
    job.not_judged.push_back(
        {"ranks not recorded",
         "the job had " + std::to_string(*job.world_size) + " ranks and these recordings hold " +
             std::to_string(by_rank.size()) +
             ": give every node's recording, or a straggler or the rank that stopped first may be "
             "among the missing"});
  job.nodes = std::move(nodes);
  return job;
}

}  // namespace gpumon::diagnose
