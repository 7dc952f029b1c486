// SPDX-License-Identifier: MIT
// Reads scenario files (JSON, format in docs/scenarios.md) into a Scenario. Strict: unknown keys,
// wrong types, non-finite or out-of-range numbers and oversized inputs are errors that name the
// JSON path, e.g. "devices[2].fields.power_draw_mw.ramp.duration_s: must be > 0".
//
// Pure C++ (no NVML); thread-compatible. Never throws.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "fake_nvml/scenario.h"

namespace gpumon::fake {

struct ParseResult {
  std::optional<Scenario> scenario;  ///< set on success
  std::string error;                 ///< set on failure: "<json path>: <what is wrong>"
};

/// Parses scenario JSON. `default_name` names the scenario when it has no "name" key.
ParseResult parse_scenario(std::string_view json_text, std::string_view default_name);

/// Reads and parses a scenario file; errors start with the file's path.
ParseResult load_scenario_file(const std::string& path);

/// Where a scenario given as GPUMON_FAKE_SCENARIO lives. A value with a '/' or ending in ".json"
/// is a path; a bare name ("demo") is looked up as <dir>/<name>.json in `scenario_dir` (from
/// GPUMON_SCENARIO_DIR, may be empty) and then in `builtin_dir` (the shipped scenarios beside
/// the fake library). Returns the path, or an error naming the places it looked.
struct ResolvedPath {
  std::string path;
  std::string error;
};
ResolvedPath resolve_scenario_path(std::string_view name_or_path, std::string_view scenario_dir,
                                   std::string_view builtin_dir);

/// The nvmlReturn_t value for an NVML error name ("NO_PERMISSION" or "NVML_ERROR_NO_PERMISSION").
std::optional<int> return_code_from_name(std::string_view name);

}  // namespace gpumon::fake
