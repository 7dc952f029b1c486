// SPDX-License-Identifier: MIT
// How many processes the kernel's OOM killer has killed in this process's memory cgroup: the
// `oom_kill` count of cgroup v2's memory.events, or of cgroup v1's memory.oom_control. Read at a
// command's start and end, a difference says the command (or a process beside it) was killed
// for memory: an exit by SIGKILL (status 137) alone does not.
//
// Thread-safety: free functions over files.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace gpumon::host {

/// The count, or nullopt where no memory cgroup file is readable (no cgroup, a container that
/// hides it).
std::optional<std::uint64_t> cgroup_oom_kills(
    const std::string& proc_self_cgroup = "/proc/self/cgroup",
    const std::string& cgroup_root = "/sys/fs/cgroup");

/// The `oom_kill` value in the text of memory.events or memory.oom_control; nullopt without one.
std::optional<std::uint64_t> parse_oom_kill(const std::string& text);

}  // namespace gpumon::host
