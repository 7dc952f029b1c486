// SPDX-License-Identifier: MIT
// ProcessStatsReader: the CPU time and memory of a training process and of its descendants
// (DataLoader workers), and the memory left on its host and in its memory cgroup, read from
// /proc and the cgroup file system through the ProcFiles seam.
//
// Memory is PSS (/proc/PID/smaps_rollup, Linux >= 4.14): forked workers share the parent's
// pages until they write them, so RSS would count those pages once per worker; PSS splits
// each shared page between its sharers and the sum over the tree is what the tree costs.
// Where smaps_rollup cannot be read (an older kernel, another user's process) RSS from statm
// stands in and `pss_is_rss` says so. Every value is std::nullopt when unreadable, never 0.
// Costs a few small reads per process (docs/PERFORMANCE.md, "Host memory and CPU").
//
// Thread-safety: const methods over the ProcFiles, which may be used from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "host/proc_files.h"

namespace gpumon::host {

struct ProcessUsage {
  std::optional<double> cpu_s;  ///< utime + stime of all its threads, seconds
  std::optional<std::int64_t> rss_bytes;
  std::optional<std::int64_t> pss_bytes;  ///< RSS where `pss_is_rss`
  bool pss_is_rss = false;                ///< smaps_rollup unreadable: PSS is RSS
};

/// A process and the sum over its descendants (children, their children, ...).
struct ProcessTreeUsage {
  ProcessUsage self;
  int workers = 0;  ///< descendants found alive
  /// Sums over the descendants; 0 with no descendant, nullopt when they could not be listed
  /// (no /proc/PID/task/TID/children: a kernel without CONFIG_PROC_CHILDREN).
  std::optional<double> workers_cpu_s;
  std::optional<std::int64_t> workers_rss_bytes, workers_pss_bytes;
  bool workers_pss_is_rss = false;  ///< some worker's PSS was its RSS
};

struct HostMemory {
  std::optional<std::int64_t> mem_available_bytes, mem_total_bytes;  ///< /proc/meminfo
  /// The memory cgroup of the process: its limit (the smallest along its path up to the root;
  /// nullopt when unlimited) and its usage (page cache included).
  std::optional<std::int64_t> cgroup_limit_bytes, cgroup_usage_bytes;
};

struct ProcessStatsOptions {
  long ticks_per_second = 100;     ///< sysconf(_SC_CLK_TCK)
  std::int64_t page_bytes = 4096;  ///< sysconf(_SC_PAGESIZE)
  int max_workers = 256;           ///< descendants read at most
};

class ProcessStatsReader {
 public:
  /// `proc` is /proc; `cgroup` the cgroup file system (/sys/fs/cgroup). Both must outlive this.
  ProcessStatsReader(const ProcFiles& proc, const ProcFiles& cgroup,
                     ProcessStatsOptions options = {});

  ProcessUsage read_process(std::int64_t pid) const;
  /// nullopt when the process itself cannot be read (it is gone).
  std::optional<ProcessTreeUsage> read_tree(std::int64_t pid) const;
  /// MemAvailable/MemTotal and the memory cgroup `pid` is in.
  HostMemory read_host(std::int64_t pid) const;

  /// The options of this machine (clock ticks, page size).
  static ProcessStatsOptions system_options();

 private:
  const ProcFiles& proc_;
  const ProcFiles& cgroup_;
  ProcessStatsOptions options_;
};

}  // namespace gpumon::host
