// SPDX-License-Identifier: MIT
// ProcessInspector: reads the host details of GPU processes from /proc (through ProcFiles).
// It never throws: a process that exits while it is read, a hidepid mount, or a PID from
// another PID namespace become Missing reasons and a Visibility, never a guess.
//
// Thread-safety: none; one thread uses an instance (it keeps the previous CPU readings).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "host/host_process.h"
#include "host/proc_files.h"
#include "host/user_names.h"

namespace gpumon::host {

struct InspectorOptions {
  long clock_ticks_per_second = 0;  ///< 0: sysconf(_SC_CLK_TCK)
  long page_size_bytes = 0;         ///< 0: sysconf(_SC_PAGESIZE)
  std::size_t command_line_max_bytes = 4096;
  /// Check that a process holds a /dev/nvidia* file before showing it (once per process), so
  /// a host PID that names another process in gpumon's container is not shown as the GPU user.
  bool check_gpu_files = true;
};

class ProcessInspector {
 public:
  /// `files` and `users` must outlive the inspector. Reads boot time and the proc mount's
  /// hidepid option once, here.
  ProcessInspector(const ProcFiles& files, UserNames& users, InspectorOptions options = {});

  /// Host details of each PID in `pids` (duplicates allowed: each is read once), in order.
  /// `now` is a monotonic time: CPU % covers the time since the previous inspect() that saw
  /// the same process, or the process's whole life on the first sight. Processes not in
  /// `pids` are forgotten.
  std::vector<HostProcessInfo> inspect(const std::vector<unsigned>& pids,
                                       std::chrono::steady_clock::time_point now);

  bool hides_other_users() const { return hides_other_users_; }

 private:
  struct Seen {
    std::uint64_t start_ticks = 0;
    std::uint64_t cpu_ticks = 0;
    std::chrono::steady_clock::time_point when{};
    bool other_process = false;
    job::JobIdentity job;
  };

  HostProcessInfo inspect_one(unsigned pid, std::chrono::steady_clock::time_point now,
                              std::optional<double> uptime_s,
                              std::unordered_map<unsigned, Seen>& next);
  bool holds_gpu_files_or_unknown(unsigned pid) const;
  job::JobIdentity read_job(const std::string& dir) const;

  const ProcFiles& files_;
  UserNames& users_;
  InspectorOptions options_;
  std::optional<std::int64_t> boot_time_s_;
  bool hides_other_users_ = false;
  std::string hostname_;  ///< qualifies a loopback rendezvous address in a job's id
  std::unordered_map<unsigned, Seen> seen_;
};

}  // namespace gpumon::host
