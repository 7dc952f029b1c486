// SPDX-License-Identifier: MIT
// Finding and starting the node's agent for Monitor::start(), with the Python package's rules
// (python/gpumon/_monitor.py): the binary is $GPUMON_BINARY (and only it, when set) or gpumon on
// PATH; the agent runs in its own session (it outlives this process until idle), and ranks
// starting at once start one agent (a lock file beside the socket).
//
// Thread-safety: plain functions; start_agent_once() serialises through the lock file.
#pragma once

#include <optional>
#include <string>

namespace gpumon::client {

/// True when something accepts connections on the Unix socket `path` now.
bool is_listening(const std::string& path);

/// The gpumon binary: $GPUMON_BINARY (and only it, when set), else `own` (the caller's own
/// install's), else gpumon on PATH, else `fallback`, each only when it is an executable file;
/// nullopt when none.
std::optional<std::string> find_gpumon_binary(const std::string& fallback = "",
                                              const std::string& own = "");

/// Starts `binary agent --socket path --exit-when-idle $GPUMON_AGENT_IDLE_EXIT_S [-o record]`
/// unless an agent already listens, and waits up to 5 s for it to listen. The socket's folder
/// must pass agent::check_socket_folder() (it is created 0700 when missing); the lock and the
/// log are never opened through a symbolic link. Its stderr goes to $GPUMON_AGENT_LOG (default
/// nowhere). Empty, or why it failed.
std::string start_agent_once(const std::string& binary, const std::string& path,
                             const std::string& record);

}  // namespace gpumon::client
