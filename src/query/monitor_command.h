// SPDX-License-Identifier: MIT
// `gpumon dmon` and `gpumon pmon`: nvidia-smi's scrolling device and process monitors, with
// its options (-i, -d, -c, -s, -o, -f) and its table layout (query/monitor_table.h), so
// `nvidia-smi dmon -s pucvmet -c 10` becomes `gpumon dmon -s pucvmet -c 10`. See docs/query.md.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "query/monitor_table.h"
#include "query/query_command.h"

namespace gpumon::query {

enum class MonitorKind { kDmon, kPmon };

struct MonitorOptions {
  MonitorKind kind = MonitorKind::kDmon;
  bool help = false;
  std::string select;                     ///< -s letters, checked
  std::optional<std::string> ids;         ///< -i list; nullopt: every GPU
  std::chrono::milliseconds delay{1000};  ///< -d seconds
  std::optional<std::uint64_t> count;     ///< -c; nullopt: until Ctrl-C
  StampColumns stamp;                     ///< -o D, T
  std::string file;                       ///< -f; empty: stdout
};

/// Parses everything after the word `dmon` or `pmon`.
Expected<MonitorOptions> parse_monitor_options(MonitorKind kind,
                                               const std::vector<std::string>& args);
/// The text of -h.
std::string monitor_usage(MonitorKind kind);

/// Runs `gpumon dmon|pmon ARGS...`; exit statuses as run_query_command's. Never throws.
int run_monitor_command(MonitorKind kind, const std::vector<std::string>& args, std::ostream& out,
                        std::ostream& err);

namespace detail {
int run_monitor_command(MonitorKind kind, const std::vector<std::string>& args, std::ostream& out,
                        std::ostream& err, const QueryEnvironment& env);
}  // namespace detail

}  // namespace gpumon::query
