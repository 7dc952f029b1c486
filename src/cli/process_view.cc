// SPDX-License-Identifier: MIT
#include "cli/process_view.h"

#include <algorithm>
#include <functional>
#include <set>

#include "util/ascii_lower.h"

namespace gpumon::cli {
namespace {

bool matches(const ProcessRow& p, const std::string& needle) {
  if (needle.empty()) return true;
  auto has = [&](std::string_view text) {
    return util::ascii_lower(text).find(needle) != std::string::npos;
  };
  return has(std::to_string(p.gpu.pid)) || (p.host.user && has(*p.host.user)) ||
         (p.host.command_line && has(*p.host.command_line)) || (p.gpu.name && has(*p.gpu.name));
}

// The sort value, bigger first in the key's natural order; nullopt sorts last either way.
std::optional<double> value_of(const ProcessRow& p, ProcessSort sort) {
  switch (sort) {
    case ProcessSort::kGpuMemory:
      if (p.gpu.used_memory_bytes) return static_cast<double>(*p.gpu.used_memory_bytes);
      return std::nullopt;
    case ProcessSort::kSmUtil:
      if (p.gpu.sm_util_pct) return *p.gpu.sm_util_pct;
      return std::nullopt;
    case ProcessSort::kCpu:
      if (p.host.cpu_percent) return *p.host.cpu_percent;
      return std::nullopt;
    case ProcessSort::kHostMemory:
      if (p.host.rss_bytes) return static_cast<double>(*p.host.rss_bytes);
      return std::nullopt;
    case ProcessSort::kTime:  // running longest first: the earliest start is the biggest
      if (p.host.start_time)
        return -std::chrono::duration<double>(p.host.start_time->time_since_epoch()).count();
      return std::nullopt;
    case ProcessSort::kPid:  // smallest first, as ps lists them
      return -static_cast<double>(p.gpu.pid);
    case ProcessSort::kGpu: return -static_cast<double>(p.gpu.gpu_index);
  }
  return std::nullopt;
}

}  // namespace

const char* sort_name(ProcessSort sort) {
  switch (sort) {
    case ProcessSort::kGpu: return "GPU";
    case ProcessSort::kGpuMemory: return "GPU mem";
    case ProcessSort::kSmUtil: return "SM %";
    case ProcessSort::kCpu: return "CPU %";
    case ProcessSort::kHostMemory: return "RSS";
    case ProcessSort::kTime: return "time";
    case ProcessSort::kPid: return "PID";
  }
  return "";
}

ProcessSort next_sort(ProcessSort sort) {
  return sort == ProcessSort::kPid ? ProcessSort::kGpu
                                   : static_cast<ProcessSort>(static_cast<int>(sort) + 1);
}

std::vector<unsigned> launcher_pids(const Snapshot& snap) {
  std::set<unsigned> gpu_pids, out;
  for (const ProcessRow& p : snap.processes) gpu_pids.insert(p.gpu.pid);
  for (const ProcessRow& p : snap.processes)
    if (p.host.ppid && *p.host.ppid > 1 && !gpu_pids.count(*p.host.ppid)) out.insert(*p.host.ppid);
  return {out.begin(), out.end()};
}

std::vector<ProcessLine> arrange_processes(
    const Snapshot& snap, const ProcessViewState& state,
    const std::map<unsigned, host::ProcessBrief>& launchers) {
  const std::string needle = util::ascii_lower(state.filter);
  std::vector<const ProcessRow*> rows;
  for (const ProcessRow& p : snap.processes)
    if ((!state.gpu || p.gpu.gpu_index == *state.gpu) && matches(p, needle)) rows.push_back(&p);
  std::stable_sort(rows.begin(), rows.end(), [&](const ProcessRow* a, const ProcessRow* b) {
    const auto va = value_of(*a, state.sort), vb = value_of(*b, state.sort);
    if (va.has_value() != vb.has_value()) return va.has_value();  // missing last
    if (va && *va != *vb) return state.reverse ? *va < *vb : *va > *vb;
    if (a->gpu.gpu_index != b->gpu.gpu_index) return a->gpu.gpu_index < b->gpu.gpu_index;
    return a->gpu.pid < b->gpu.pid;
  });
  std::vector<ProcessLine> out;
  if (!state.tree) {
    for (const ProcessRow* p : rows) out.push_back({p, nullptr, 0});
    return out;
  }

  // The tree: a process under its parent when the parent is listed, in the sort's order.
  std::set<unsigned> listed;
  for (const ProcessRow* p : rows) listed.insert(p->gpu.pid);
  auto parent_of = [&](const ProcessRow* p) -> std::optional<unsigned> {
    if (p->host.ppid && *p->host.ppid != p->gpu.pid && listed.count(*p->host.ppid))
      return *p->host.ppid;
    return std::nullopt;
  };
  std::map<unsigned, std::vector<const ProcessRow*>> children;
  for (const ProcessRow* p : rows)
    if (auto parent = parent_of(p)) children[*parent].push_back(p);
  std::set<const ProcessRow*> done;
  std::set<unsigned> expanded;  // a process on two GPUs lists its children once
  std::function<void(const ProcessRow*, std::size_t)> emit = [&](const ProcessRow* p,
                                                                 std::size_t depth) {
    if (!done.insert(p).second) return;
    out.push_back({p, nullptr, depth});
    if (!expanded.insert(p->gpu.pid).second) return;
    if (auto it = children.find(p->gpu.pid); it != children.end())
      for (const ProcessRow* c : it->second) emit(c, depth + 1);
  };
  std::set<unsigned> launcher_done;
  for (const ProcessRow* p : rows) {
    if (parent_of(p)) continue;
    const auto l = p->host.ppid ? launchers.find(*p->host.ppid) : launchers.end();
    if (l == launchers.end()) {
      emit(p, 0);
      continue;
    }
    if (!launcher_done.insert(l->first).second) continue;
    out.push_back({nullptr, &l->second, 0});
    for (const ProcessRow* q : rows)
      if (!parent_of(q) && q->host.ppid && *q->host.ppid == l->first) emit(q, 1);
  }
  for (const ProcessRow* p : rows) emit(p, 0);  // parents in a loop (PIDs reused): flat
  return out;
}

}  // namespace gpumon::cli
