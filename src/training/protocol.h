// SPDX-License-Identifier: MIT
// The wire format between a training process and the agent (docs/python.md, "Protocol"): one
// JSON object per line (UTF-8, '\n'-terminated), at most kMaxMessageBytes bytes with the newline.
// The first message of a connection is a hello; then steps, OOM reports and a bye. A message
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

struct Bye {};
struct Unknown {
  std::string type;
};

/// A step message carries the step's timing and allocator fields; its identity (pid, rank,
/// device) comes from the connection's hello.
using Message = std::variant<Hello, Step, Oom, Error, DeviceUpdate, Bye, Unknown>;

/// Parses one line (without its '\n'). The message, or why it is refused.
std::variant<Message, std::string> parse_message(std::string_view line);

/// A rank event as the agent saw it or a recording stored it; for kind "hello" and "device" (the
/// process's hello with the device it resolved later: RankEvent::carries_hello()) the detail is
/// parsed into `hello` with the hello's field rules above (a missing pid is the event's; a
/// detail that does not parse as a hello leaves it nullopt: nothing is guessed from it).
RankEvent rank_event(std::int64_t time_ms, std::int64_t pid, std::optional<std::int64_t> rank,
                     std::string kind, std::string detail);

}  // namespace gpumon::training
