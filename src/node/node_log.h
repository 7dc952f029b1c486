// SPDX-License-Identifier: MIT
// NodeLog: the lines `gpumon record`, `agent` and `serve` write on stderr while they run: their
// lifecycle (listening, simulated GPUs, a GPU that stopped answering, the recording stopped,
// the closing summary) and the live findings as they appear, change and clear. As text, as
// always ("gpumon agent: listening on ..."), or with --log-format json one JSON object per line
// for a log collector, with stable keys in alphabetical order (docs/cli.md, "Logs as JSON
// lines"): "command", "event", "level", "message", "time" ("2026-12-02T20:33:39.123Z"), and for
// a finding, event "finding" with "state" (appeared, changed, cleared), level its severity, and
// the finding's own keys (compact_finding() and its advice) in place of "message".
//
// Thread-safety: every method may be called from any thread (one mutex per log, shared by
// copies), so lines never interleave.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include "diagnose/finding.h"

namespace gpumon::node {

enum class LogFormat { kText, kJson };

/// "text" or "json"; nullopt for anything else.
std::optional<LogFormat> parse_log_format(std::string_view text);

/// What --log-format's value error says.
inline constexpr const char* kLogFormatError = "--log-format takes text or json";

class NodeLog {
 public:
  enum class Level { kInfo, kWarning, kError };

  /// `command`: "agent", "serve", "record". `now_ms`: the wall clock (tests inject theirs).
  NodeLog(std::ostream& out, std::string command, LogFormat format,
          std::function<std::int64_t()> now_ms = {});

  /// One lifecycle line. `event` is a stable lower_snake name; `message` the sentence (as text,
  /// "gpumon COMMAND: " before it, and "warning: " for a warning).
  void say(std::string_view event, std::string_view message, Level level = Level::kInfo) const;
  /// One live finding that appeared, changed or cleared.
  void finding(const diagnose::Finding& f, std::string_view state) const;

  LogFormat format() const { return format_; }

 private:
  std::ostream* out_;
  std::string command_;
  LogFormat format_;
  std::function<std::int64_t()> now_ms_;
  std::shared_ptr<std::mutex> mutex_ = std::make_shared<std::mutex>();
};

}  // namespace gpumon::node
