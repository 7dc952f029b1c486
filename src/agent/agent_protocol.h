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

#include "record/recording_types.h"

namespace gpumon::agent {

inline constexpr std::size_t kMaxMessageBytes = 4096;
inline constexpr int kProtocolVersion = 1;

struct Hello {
  std::int64_t pid = 0;
  std::optional<std::int64_t> rank;
  std::optional<std::int64_t> local_rank;
  std::optional<std::int64_t> world_size;
  std::optional<std::string> hostname;
  std::optional<std::string> torch_version;
  std::optional<std::string> device;  ///< "cuda:0", "cpu"
  std::string json;                   ///< the message, compact, for the recording
};

/// A step: RecordedStep's timing and allocator fields (identity comes from the hello).
struct Step {
  record::RecordedStep step;
};

struct Oom {
  std::optional<std::int64_t> step;
  std::optional<std::int64_t> requested_bytes;
  std::string json;  ///< the message, compact
};

struct Bye {};
struct Unknown {
  std::string type;
};

using Message = std::variant<Hello, Step, Oom, Bye, Unknown>;

/// Parses one line (without its '\n'). The message, or why it is refused.
std::variant<Message, std::string> parse_message(std::string_view line);

}  // namespace gpumon::agent
