// SPDX-License-Identifier: MIT
// Parsers for the files that say how much memory a process and its host use: smaps_rollup,
// statm, meminfo, a task's children list and the memory cgroup's limit and usage files (v1
// and v2). Pure functions over text: no I/O, no locale, no exceptions; a value the text does
// not hold is std::nullopt, never 0.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace gpumon::host {

/// A "Key:   123 kB" line's value in bytes (smaps_rollup, meminfo, status); nullopt without one.
std::optional<std::int64_t> parse_kb_field(std::string_view text, std::string_view key);

/// The resident set (second field) of /proc/PID/statm, in pages.
std::optional<std::int64_t> parse_statm_resident_pages(std::string_view text);

/// The pids of /proc/PID/task/TID/children ("123 456 "); malformed entries are skipped.
std::vector<std::int64_t> parse_children(std::string_view text);

/// memory.max (v2) or memory.limit_in_bytes (v1) in bytes; nullopt for no limit ("max", or
/// v1's page-counter maximum 9223372036854771712 and anything above 2^62).
std::optional<std::int64_t> parse_cgroup_limit(std::string_view text);

/// memory.current (v2) or memory.usage_in_bytes (v1) in bytes.
std::optional<std::int64_t> parse_cgroup_usage(std::string_view text);

}  // namespace gpumon::host
