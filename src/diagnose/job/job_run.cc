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
  if (!r.rank) return false;
  return job_id.empty() || (r.hello && r.hello->job.id == job_id);
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
  RunData shifted_ranks;  // the node keeps its own ranks on its own clock
  shifted_ranks.ranks = r.ranks;
  if (n.clock.applied) {
    shift_times(r, n.clock.offset_s);
    shift_times(shifted_ranks, n.clock.offset_s);
  }
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
  for (auto& info : shifted_ranks.ranks) {
    if (!pids.count(info.pid)) continue;
    info.pid = combined_pid(k, info.pid);
    if (info.gpu) info.gpu = combined_gpu(k, *info.gpu);
    into.ranks.push_back(std::move(info));
  }
  if (r.start_ms) into.start_ms = std::min(into.start_ms.value_or(*r.start_ms), *r.start_ms);
  if (r.end_ms) into.end_ms = std::max(into.end_ms.value_or(*r.end_ms), *r.end_ms);
  if (r.kind == RunData::Kind::kRecordingCutShort) into.kind = r.kind;
  r.gpus.clear(), r.events.clear(), r.processes.clear(), r.steps.clear();
  r.rank_events.clear(), r.process_samples.clear();
  r.gpus.shrink_to_fit(), r.steps.shrink_to_fit(), r.process_samples.shrink_to_fit();
}

}  // namespace

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

  // Each node's ranks of the job; a rank on two nodes is the same node given twice.
  std::map<std::int64_t, std::size_t> rank_node;
  for (std::size_t k = 0; k < nodes.size(); ++k) {
    auto& n = nodes[k];
    int others = 0;
    for (const auto& r : n.run.ranks) {
      if (!in_job(r, job.job_id)) {
        others += r.rank || r.hello ? 1 : 0;
        continue;
      }
      if (const auto [it, fresh] = rank_node.emplace(*r.rank, k); !fresh)
        return "rank " + std::to_string(*r.rank) + " is in both " + nodes[it->second].source +
               " and " + n.source + ": the same node given twice, or two runs of the job";
      n.ranks.push_back(*r.rank);
      if (r.world_size)
        job.world_size = std::max(job.world_size.value_or(*r.world_size), *r.world_size);
    }
    std::sort(n.ranks.begin(), n.ranks.end());
    if (others > 0)
      job.not_judged.push_back(
          {"processes of other jobs", n.source + ": " + std::to_string(others) +
                                          " training process(es) of another job left out"});
  }

  // Names: the host, else the file where hosts repeat or are unknown.
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
  std::stable_sort(nodes.begin(), nodes.end(), [](const NodeRun& a, const NodeRun& b) {
    if (a.ranks.empty() != b.ranks.empty()) return b.ranks.empty();
    return !a.ranks.empty() && a.ranks.front() < b.ranks.front();
  });
  for (std::size_t k = 0; k < nodes.size(); ++k)
    if (!nodes[k].ranks.empty() && nodes[k].ranks.front() == 0) job.reference = k;

  // Clocks against the reference, from the job's steps.
  auto job_steps = [&](const NodeRun& n) {
    std::set<std::int64_t> pids;
    for (const auto& r : n.run.ranks)
      if (in_job(r, job.job_id)) pids.insert(r.pid);
    std::vector<training::Step> steps;
    for (const auto& s : n.run.steps)
      if (pids.count(s.pid)) steps.push_back(s);
    return std::pair{pids, steps};
  };
  const auto ref_steps = job_steps(nodes[job.reference]).second;
  std::vector<std::set<std::int64_t>> pids(nodes.size());
  for (std::size_t k = 0; k < nodes.size(); ++k) {
    auto [p, steps] = job_steps(nodes[k]);
    pids[k] = std::move(p);
    if (k == job.reference) continue;
    nodes[k].clock = estimate_clock_offset(steps, ref_steps, t.min_steps);
    if (!nodes[k].clock.applied)
      job.not_judged.push_back({"clock of " + nodes[k].name,
                                nodes[k].clock.why_not +
                                    "; its times are compared as recorded, so who stopped first "
                                    "is not judged across nodes"});
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
  if (job.world_size && static_cast<std::int64_t>(rank_node.size()) < *job.world_size)
    job.not_judged.push_back(
        {"ranks not recorded",
         "the job had " + std::to_string(*job.world_size) + " ranks and these recordings hold " +
             std::to_string(rank_node.size()) +
             ": give every node's recording, or a straggler or the rank that stopped first may be "
             "among the missing"});
  job.nodes = std::move(nodes);
  return job;
}

}  // namespace gpumon::diagnose
