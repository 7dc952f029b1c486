// SPDX-License-Identifier: MIT
// Pieces of the scenario parser shared by scenario_parser.cc and parser_parts.cc.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fake_nvml/json_reader.h"
#include "fake_nvml/scenario.h"

namespace gpumon::fake::detail {

/// Largest magnitude a series value may have (fits an unsigned 64-bit counter).
inline constexpr double kMaxValue = 1.8e19;

struct ParseContext {
  std::uint64_t seed = 1;
  std::size_t items_total = 0;      ///< across the whole scenario, against kMaxItemsTotal
  std::size_t processes_total = 0;  ///< against kMaxProcessesTotal
};

/// Adds `count` items (points, processes, events, rules) to the scenario's budget.
void spend_items(const Node& n, std::size_t count, ParseContext& ctx);

/// A series: a number (constant) or {"<kind>": ..., "noise": x, "clamp": [lo, hi]}.
Series parse_series(const Node& n, bool code_field, std::uint64_t stream, ParseContext& ctx);
std::vector<ErrorRule> parse_errors(const Node& n, ParseContext& ctx);
std::vector<LatencyRule> parse_latencies(const Node& n, ParseContext& ctx);
std::vector<ProcessSpec> parse_processes(const Node& n, unsigned device_index, ParseContext& ctx);
std::vector<XidEvent> parse_xid_events(const Node& n, ParseContext& ctx);
std::vector<XidEvent> parse_ecc_events(const Node& n, ParseContext& ctx);
/// Orders a device's events by time (stable: equal times keep their order).
void sort_events(std::vector<XidEvent>& events);

/// Replaces "{index}" / "{index:04x}" (0-padding, width, d|x|X) with the device index.
std::string expand_placeholders(const Node& n, const std::string& text, unsigned index);
/// A string member, with placeholders expanded.
std::string expanded_string(const Node& n, std::size_t max_length, unsigned index);

/// The noise stream of one series: distinct per seed, device and field.
std::uint64_t noise_stream(std::uint64_t seed, unsigned device, unsigned field);

}  // namespace gpumon::fake::detail
