// SPDX-License-Identifier: MIT
#include "node/node_log.h"

#include <chrono>
#include <nlohmann/json.hpp>

#include "diagnose/live/live_findings.h"
#include "record/recording_types.h"

namespace gpumon::node {
namespace {

using nlohmann::json;

const char* level_name(NodeLog::Level level) {
  switch (level) {
    case NodeLog::Level::kInfo: return "info";
    case NodeLog::Level::kWarning: return "warning";
    case NodeLog::Level::kError: return "error";
  }
  return "info";
}

std::int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

std::optional<LogFormat> parse_log_format(std::string_view text) {
  if (text == "text") return LogFormat::kText;
  if (text == "json") return LogFormat::kJson;
  return std::nullopt;
}

NodeLog::NodeLog(std::ostream& out, std::string command, LogFormat format,
                 std::function<std::int64_t()> now_ms)
    : out_(&out),
      command_(std::move(command)),
      format_(format),
      now_ms_(now_ms ? std::move(now_ms) : wall_ms) {}

void NodeLog::say(std::string_view event, std::string_view message, Level level) const {
  std::string line;
  if (format_ == LogFormat::kText) {
    line = "gpumon " + command_ + ": " + (level == Level::kWarning ? "warning: " : "") +
           std::string(message);
  } else {
    const json o = {{"time", record::format_iso_ms(now_ms_())},
                    {"command", command_},
                    {"level", level_name(level)},
                    {"event", event},
                    {"message", message}};
    line = o.dump(-1, ' ', false, json::error_handler_t::replace);
  }
  std::lock_guard lock(*mutex_);
  *out_ << line << '\n' << std::flush;
}

void NodeLog::finding(const diagnose::Finding& f, std::string_view state) const {
  const std::int64_t now = now_ms_();
  std::string line;
  if (format_ == LogFormat::kText) {
    line = "gpumon " + command_ + ": " + diagnose::finding_log_line(f, state == "cleared", now);
  } else {
    json o = {{"time", record::format_iso_ms(now)},
              {"command", command_},
              {"level", state == "cleared" ? std::string("info")
                                           : std::string(diagnose::severity_name(f.severity))},
              {"event", "finding"},
              {"state", state}};
    const json compact = diagnose::compact_finding(f);
    for (const auto& [key, value] : compact.items()) o[key] = value;
    o["advice"] = f.advice;
    line = o.dump(-1, ' ', false, json::error_handler_t::replace);
  }
  std::lock_guard lock(*mutex_);
  *out_ << line << '\n' << std::flush;
}

}  // namespace gpumon::node
