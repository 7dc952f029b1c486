// SPDX-License-Identifier: MIT
// What both training clients (the C++ gpumon::Monitor and Python's gpumon.start(), which calls
// these through _gpumon) do the same way, so the two cannot drift apart:
// - find the node's agent, and start one when none listens (attach_agent);
// - say who this process is: its hello, with the environment's ranks and CUDA device settings
//   beside what the caller knows of its device (hello_line);
// - report a CUDA out-of-memory error (oom_line).
// The hand-over schedule (hand_over_schedule.h) and the fork generation
// (agent::fork_generation()) are shared the same way.
//
// Thread-safety: plain functions; attach_agent() may start a process and wait up to 5 s.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace gpumon::client {

struct AttachOptions {
  std::string socket_path;  ///< empty: $GPUMON_AGENT_SOCKET, else the default socket
  bool start_agent = true;  ///< start `gpumon agent` when nothing listens on the default socket
  std::string record;       ///< the started agent records here (empty: $GPUMON_RECORD, or none)
  /// A gpumon binary to try after $GPUMON_BINARY and PATH (Python: its checkout's build/).
  std::string fallback_binary;
  /// The caller's own install's binary, tried after $GPUMON_BINARY and before PATH (Python: the
  /// executable a `pip install .` put beside the module).
  std::string own_binary;
};

struct AgentAttach {
  std::string socket_path;
  /// Empty when the client should connect (the agent listens, or will be retried: a socket
  /// named by the caller or the environment is never second-guessed); else "no-agent",
  /// "unsafe-folder" (the default socket's folder fails agent::check_socket_folder()) or
  /// "agent-start", with `warning` saying why and what to do. The client then does nothing.
  std::string warning_kind;
  std::string warning;
  bool usable() const { return warning_kind.empty(); }
};

AgentAttach attach_agent(const AttachOptions& options);

/// What the caller knows of the device it trains on (nullopt: unknown or not a GPU).
struct DeviceIdentity {
  std::optional<std::string> torch_version;
  std::optional<std::string> device;  ///< torch's name: "cuda:0", "cpu"
  std::optional<std::string> pci_bus_id;
  std::optional<std::string> device_uuid;
};

/// The hello of this process: its pid, RANK / LOCAL_RANK / WORLD_SIZE, host name,
/// CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER from the environment, and `device`.
std::string hello_line(const DeviceIdentity& device);

/// The `device` message: the device this process resolved after its hello (it said hello
/// before importing torch or before choosing its GPU).
std::string device_line(const DeviceIdentity& device);

/// The OOM report for the agent (step: the step it happened in).
std::string oom_line(std::int64_t step, std::optional<std::int64_t> requested_bytes,
                     std::optional<std::string> device, std::optional<std::string> path);

}  // namespace gpumon::client
