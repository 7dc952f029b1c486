// SPDX-License-Identifier: MIT
// What this host's /proc says about a GPU process. Plain data for the formatters.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "gpu/reading.h"
#include "job/job_identity.h"

namespace gpumon::host {

/// Whether gpumon could see the process that NVML reported.
enum class Visibility : std::uint8_t {
  kVisible,       ///< /proc/PID is this process: the fields below come from it
  kNotVisible,    ///< no /proc/PID: the process exited, or its PID belongs to another PID
                  ///< namespace (NVML reports host PIDs; gpumon runs in a container)
  kOtherProcess,  ///< /proc/PID exists but holds no /dev/nvidia* file: a different process
                  ///< with the same number in this PID namespace, so nothing is shown
  kHidden,        ///< /proc is mounted with hidepid: other users' processes are hidden
};

/// "visible", "not_visible", "other_process", "hidden" (JSON and docs use these).
std::string_view to_string(Visibility v);

/// How cpu_percent was measured.
enum class CpuWindow : std::uint8_t {
  kSinceStart,  ///< average since the process started (a single reading)
  kInterval,    ///< over the interval since the previous reading of the same process
};

std::string_view to_string(CpuWindow w);  ///< "since_start", "interval"

/// Host details of one process. Fields are Missing::kNotAvailable when the process is not
/// visible, Missing::kNoPermission when /proc refused to show them.
struct HostProcessInfo {
  unsigned pid = 0;
  Visibility visibility = Visibility::kNotVisible;
  Reading<unsigned> uid;              ///< effective uid
  Reading<std::string> user;          ///< user name, or the uid in digits without an entry
  Reading<std::string> comm;          ///< /proc/PID/stat name, printable
  Reading<unsigned> ppid;             ///< the parent (the live view's tree)
  Reading<std::string> command_line;  ///< arguments joined by spaces, printable, bounded
  Reading<double> cpu_percent;        ///< % of one CPU; above 100 when multi-threaded
  CpuWindow cpu_window = CpuWindow::kSinceStart;
  Reading<std::uint64_t> rss_bytes;  ///< resident memory on the host
  Reading<std::chrono::system_clock::time_point> start_time;
  /// Clock ticks after boot at which it started: with the PID, what tells this process from a
  /// later one that got the same PID (the live view checks it before sending a signal).
  std::optional<std::uint64_t> start_ticks;
  /// Its Slurm job, pod, container and job id (/proc/PID/cgroup and environ, read once per
  /// process); empty when not visible. Only the variables job_identity() names are kept.
  job::JobIdentity job;
};

}  // namespace gpumon::host
