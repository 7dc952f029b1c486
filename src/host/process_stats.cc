// SPDX-License-Identifier: MIT
#include "host/process_stats.h"

#include <unistd.h>

#include <algorithm>
#include <set>
#include <vector>

#include "host/host_memory_parse.h"
#include "host/proc_parse.h"

namespace gpumon::host {
namespace {

constexpr std::size_t kSmallFile = 4096;
constexpr std::size_t kMaxTasks = 4096;

std::string pid_path(std::int64_t pid, std::string_view file) {
  return std::to_string(pid) + "/" + std::string(file);
}

}  // namespace

ProcessStatsReader::ProcessStatsReader(const ProcFiles& proc, const ProcFiles& cgroup,
                                       ProcessStatsOptions options)
    : proc_(proc), cgroup_(cgroup), options_(options) {}

ProcessStatsOptions ProcessStatsReader::system_options() {
  ProcessStatsOptions o;
  if (const long t = ::sysconf(_SC_CLK_TCK); t > 0) o.ticks_per_second = t;
  if (const long p = ::sysconf(_SC_PAGESIZE); p > 0) o.page_bytes = p;
  return o;
}

ProcessUsage ProcessStatsReader::read_process(std::int64_t pid) const {
  ProcessUsage u;
  const FileText stat = proc_.read(pid_path(pid, "stat"), kSmallFile);
  if (stat.ok())
    if (const auto st = parse_stat(stat.text)) {
      u.cpu_s = static_cast<double>(st->utime_ticks + st->stime_ticks) /
                static_cast<double>(options_.ticks_per_second);
      u.rss_bytes = static_cast<std::int64_t>(st->rss_pages) * options_.page_bytes;
    }
  const FileText rollup = proc_.read(pid_path(pid, "smaps_rollup"), kSmallFile);
  if (rollup.ok()) {
    u.pss_bytes = parse_kb_field(rollup.text, "Pss");
    if (const auto rss = parse_kb_field(rollup.text, "Rss")) u.rss_bytes = rss;
  }
  if (!u.pss_bytes) {
    const FileText statm = proc_.read(pid_path(pid, "statm"), kSmallFile);
    if (statm.ok())
      if (const auto pages = parse_statm_resident_pages(statm.text))
        u.rss_bytes = *pages * options_.page_bytes;
    if (u.rss_bytes) u.pss_bytes = u.rss_bytes, u.pss_is_rss = true;
  }
  return u;
}

std::optional<ProcessTreeUsage> ProcessStatsReader::read_tree(std::int64_t pid) const {
  ProcessTreeUsage t;
  t.self = read_process(pid);
  if (!t.self.cpu_s && !t.self.pss_bytes) return std::nullopt;
  // Breadth first over /proc/P/task/T/children, each pid once (a pid can be reused while we
  // read; the bound keeps a fork bomb from costing more than max_workers reads).
  std::vector<std::int64_t> todo{pid};
  std::set<std::int64_t> seen{pid};
  bool listed = false;
  double cpu = 0;
  std::int64_t rss = 0, pss = 0;
  for (std::size_t i = 0; i < todo.size(); ++i) {
    const std::int64_t p = todo[i];
    const DirNames tasks = proc_.list(pid_path(p, "task"), kMaxTasks);
    if (!tasks.ok()) continue;
    for (const std::string& tid : tasks.names) {
      const FileText children = proc_.read(pid_path(p, "task/" + tid + "/children"), kSmallFile);
      if (!children.ok()) continue;
      if (p == pid) listed = true;
      for (const std::int64_t c : parse_children(children.text)) {
        if (static_cast<int>(seen.size()) > options_.max_workers) break;
        if (seen.insert(c).second) todo.push_back(c);
      }
    }
    if (p == pid) continue;
    const ProcessUsage w = read_process(p);
    if (!w.cpu_s && !w.pss_bytes) continue;  // exited meanwhile
    // Exiting: a zombie keeps its stat line but has no memory left (RSS 0; a running process
    // always has some). Counted, it would be a worker with 0 bytes, as at a run's end.
    if (w.rss_bytes && *w.rss_bytes == 0) continue;
    ++t.workers;
    cpu += w.cpu_s.value_or(0);
    rss += w.rss_bytes.value_or(0);
    pss += w.pss_bytes.value_or(0);
    t.workers_pss_is_rss = t.workers_pss_is_rss || w.pss_is_rss;
  }
  if (listed) t.workers_cpu_s = cpu, t.workers_rss_bytes = rss, t.workers_pss_bytes = pss;
  return t;
}

HostMemory ProcessStatsReader::read_host(std::int64_t pid) const {
  HostMemory h;
  if (const FileText m = proc_.read("meminfo", 16384); m.ok()) {
    h.mem_available_bytes = parse_kb_field(m.text, "MemAvailable");
    h.mem_total_bytes = parse_kb_field(m.text, "MemTotal");
  }
  const FileText cg = proc_.read(pid_path(pid, "cgroup"), kSmallFile);
  if (!cg.ok()) return h;
  // "0::/path" (v2) or "4:memory:/path" (v1). A container often mounts its own cgroup at the
  // root while /proc still names the host's path, so every ancestor is tried up to the root;
  // the limit that holds is the smallest along the way, the usage the deepest readable one.
  std::string_view text = cg.text;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    const std::size_t a = line.find(':');
    const std::size_t b = a == std::string_view::npos ? a : line.find(':', a + 1);
    if (b == std::string_view::npos) continue;
    const std::string_view controllers = line.substr(a + 1, b - a - 1);
    const bool v1 = controllers == "memory";
    if (!v1 && !(controllers.empty() && line.substr(0, a) == "0")) continue;
    std::string path(line.substr(b + 1));
    const std::string base = v1 ? "memory" : ".";
    const char* limit_file = v1 ? "memory.limit_in_bytes" : "memory.max";
    const char* usage_file = v1 ? "memory.usage_in_bytes" : "memory.current";
    std::optional<std::int64_t> limit, usage;
    bool found = false;
    while (true) {
      while (path.size() > 1 && path.back() == '/') path.pop_back();
      const std::string dir = base + (path == "/" ? std::string() : path) + "/";
      const FileText l = cgroup_.read(dir + limit_file, 64);
      if (l.ok()) {
        found = true;
        if (const auto v = parse_cgroup_limit(l.text)) limit = limit ? std::min(*limit, *v) : *v;
        if (!usage)
          if (const FileText u = cgroup_.read(dir + usage_file, 64); u.ok())
            usage = parse_cgroup_usage(u.text);
      }
      if (path == "/" || path.empty()) break;
      path = path.substr(0, path.rfind('/'));
      if (path.empty()) path = "/";
    }
    if (!found) continue;
    h.cgroup_limit_bytes = limit, h.cgroup_usage_bytes = usage;
    if (v1) break;  // v1's memory controller is the one that limits; prefer it over a v2 line
  }
  return h;
}

}  // namespace gpumon::host
