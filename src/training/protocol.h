// SPDX-License-Identifier: MIT
// The wire format between a training process and the agent (docs/python.md, "Protocol"): one
// JSON object per line (UTF-8, '\n'-terminated), at most kMaxMessageBytes bytes with the newline.
// The first message of a connection is a hello; then steps, OOM reports, errors, the device
// named later, the OOM guard's and the adaptive loader's actions, and a bye. A message
// that does not parse, lacks a required field or has a field of the wrong type is an error (the
// server drops that client); an unknown "type" parses as Unknown, so newer clients can talk to
// an older agent.
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "training/training_types.h"

namespace gpumon::training {

inline constexpr std::size_t kMaxMessageBytes = 4096;
inline constexpr int kProtocolVersion = 1;

struct Oom {
  std::optional<std::int64_t> step;
  std::optional<std::int64_t> requested_bytes;
  std::string json;  ///< the message, compact
};

/// An exception that ended the process (the Python client's excepthook): `exception` (its
/// type) is required; message, where and step are kept in the detail as sent.
struct Error {
  std::string exception;
  std::string json;  ///< the message, compact
};

/// The device a process resolved after its hello: a process that said hello before it imported
/// torch (or before it chose its GPU) names it later, at its first step that sees it. The
/// fields sent replace the hello's (apply_device()); the others stay.
struct DeviceUpdate {
  std::optional<std::string> torch_version, device, pci_bus_id, device_uuid;
};

/// `hello` with `update`'s fields set, its `json` with them too.
void apply_device(Hello& hello, const DeviceUpdate& update);

/// What the OOM guard or the adaptive loader did (docs/python.md "Protocol", "action"): `action`
/// ([a-z_], 1-64 chars) is required; the others are optional and typed (the state after the
/// action: integers; `evidence` an object); other fields are kept in `json`, not parsed.
struct Action {
  std::string action;  ///< "oom_split", "oom_merge", "oom_floor", "loader_retuned", ...
  std::optional<std::int64_t> step;  ///< the step it applies from, >= 0
  std::optional<std::string> summary, reason;
  std::optional<std::int64_t> batch_size, micro_batch_size, previous_micro_batch_size;
  std::optional<std::int64_t> num_workers, previous_num_workers;
  std::optional<std::int64_t> prefetch_factor, previous_prefetch_factor, prefetch_depth, epoch;
  /// memory_captured: the finding it answers, the memory_summary() file, and the allocation
  /// history snapshot (PyTorch's memory_viz opens it; history_pending while it is recorded).
  std::optional<std::string> finding, summary_file, snapshot_file;
  bool history_pending = false;
  std::string json;  ///< the message, compact
};

/// The longest action name a client may send.
inline constexpr std::size_t kMaxActionName = 64;

struct Bye {};
struct Unknown {
  std::string type;
};

/// A step message carries the step's timing and allocator fields; its identity (pid, rank,
/// device) comes from the connection's hello.
using Message = std::variant<Hello, Step, Oom, Error, DeviceUpdate, Action, Bye, Unknown>;

/// Parses one line (without its '\n'). The message, or why it is refused.
std::variant<Message, std::string> parse_message(std::string_view line);

/// A rank event as the agent saw it or a recording stored it; for kind "hello" and "device" (the
/// process's hello with the device it resolved later: RankEvent::carries_hello()) the detail is
/// parsed into `hello` with the hello's field rules above (a missing pid is the event's; a
/// detail that does not parse as a hello leaves it nullopt: nothing is guessed from it).
RankEvent rank_event(std::int64_t time_ms, std::int64_t pid, std::optional<std::int64_t> rank,
                     std::string kind, std::string detail);

/// The action of a rank event of kind "action" (a recorded or live one), parsed from its detail
/// with the wire's rules; nullopt for another kind or a detail that does not parse as one
/// (a recording is input too: nothing is guessed from it).
std::optional<Action> action_of(const RankEvent& event);

}  // namespace gpumon::training
