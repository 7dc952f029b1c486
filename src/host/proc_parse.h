// SPDX-License-Identifier: MIT
// Parsers for the /proc files gpumon reads. Pure functions over text: no I/O, no locale, no
// exceptions; malformed input gives std::nullopt (or an empty field), never a crash. Fuzzed by
// proc_parse_fuzz.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gpumon::host {

/// The fields of /proc/PID/stat that gpumon uses (proc(5) numbering in comments).
struct ProcStat {
  std::string comm;               ///< (2) raw bytes between the first '(' and the LAST ')'
  char state = '?';               ///< (3) R, S, D, Z, ...
  unsigned ppid = 0;              ///< (4) the parent's PID; 0 for the namespace's init
  std::uint64_t utime_ticks = 0;  ///< (14) user CPU time, clock ticks
  std::uint64_t stime_ticks = 0;  ///< (15) system CPU time, clock ticks
  std::uint64_t start_ticks = 0;  ///< (22) start time, clock ticks after boot
  std::uint64_t rss_pages = 0;    ///< (24) resident set size, pages
};

/// Parses /proc/PID/stat. The command name may contain spaces and ')' (a process may call
/// itself "a) b"), so the fields are split after the last ')' in the text.
std::optional<ProcStat> parse_stat(std::string_view text);

/// The fields of /proc/PID/status that gpumon uses.
struct ProcStatus {
  std::optional<unsigned> real_uid;       ///< "Uid:" first column
  std::optional<unsigned> effective_uid;  ///< "Uid:" second column (what ps shows as USER)
};

ProcStatus parse_status(std::string_view text);

/// Seconds since boot: the first number of /proc/uptime.
std::optional<double> parse_uptime_seconds(std::string_view text);

/// Boot time in seconds since the Unix epoch: the "btime" line of /proc/stat.
std::optional<std::int64_t> parse_boot_time(std::string_view proc_stat_text);

/// The host's CPU time from /proc/stat's "cpu" line, in clock ticks: `busy` is everything but
/// idle and iowait; `cpus` counts the "cpuN" lines.
struct CpuTimes {
  std::uint64_t busy = 0, total = 0;
  unsigned cpus = 0;
};
std::optional<CpuTimes> parse_cpu_times(std::string_view proc_stat_text);

/// True when the proc file system mounted on `mount_point` (the last such line of
/// /proc/self/mountinfo) hides other users' processes entirely: hidepid=2/invisible or
/// hidepid=4/ptraceable. With hidepid=1 the directories stay visible and reads fail with EACCES.
bool proc_hides_other_users(std::string_view mountinfo, std::string_view mount_point = "/proc");

}  // namespace gpumon::host
