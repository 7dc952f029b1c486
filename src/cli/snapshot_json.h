// SPDX-License-Identifier: MIT
// The `gpumon --json` snapshot: one JSON object, numbers in base units (bytes, watts, degrees
// Celsius, hertz, seconds), missing values as null with the reason in the object's
// "unavailable" map ({"temperature_memory_c": "not supported"}).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "cli/snapshot.h"

namespace gpumon::cli {

struct JsonOptions {
  bool show_uuid = false;  ///< "uuid" is present only when asked for
  bool show_serial = false;
  std::string version;
};

nlohmann::json snapshot_to_json(const Snapshot& snap, const JsonOptions& options);

/// Indented text with a final newline. Invalid UTF-8 (none should reach here: gathering
/// cleans strings) becomes U+FFFD instead of throwing.
std::string format_snapshot_json(const Snapshot& snap, const JsonOptions& options);

}  // namespace gpumon::cli
