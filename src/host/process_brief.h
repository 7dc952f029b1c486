// SPDX-License-Identifier: MIT
// The little the live view needs about a process that is not a GPU process, or about one it
// is about to signal: its parent, its start time (which tells a reused PID apart) and its
// command line. Read from /proc through ProcFiles; nullopt when the process is gone or hidden.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "host/proc_files.h"

namespace gpumon::host {

struct ProcessBrief {
  unsigned pid = 0;
  unsigned ppid = 0;
  std::uint64_t start_ticks = 0;  ///< since boot: the same PID with other ticks is another process
  std::string command;            ///< printable command line, or "[comm]" without one
};

std::optional<ProcessBrief> read_process_brief(const ProcFiles& files, unsigned pid,
                                               std::size_t max_command_bytes = 4096);

}  // namespace gpumon::host
