// SPDX-License-Identifier: MIT
// Rendering one Cell as CSV text or as a JSON value. Locale-independent: numbers go through fmt
// (which ignores the locale unless asked), never through iostreams or printf.
#pragma once

#include <ctime>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "query/field.h"

namespace gpumon::query {

/// nvidia-smi's token for a missing value: "[N/A]", "[Not Supported]", "[GPU is lost]", ...
std::string_view missing_token(Missing why);

/// Stable lower_snake name of a reason for JSON: "not_supported", "gpu_lost", ...
std::string_view missing_json_name(Missing why);

/// One CSV cell as nvidia-smi prints it: "143771 MiB", "78.91 W", "P0", "[N/A]".
/// With `units` false the unit suffix is left out ("143771"). Control characters in text (a
/// process name with a newline) become '?', so one row stays one line.
std::string csv_cell(const Cell& cell, const FieldInfo& field, bool units);

/// A Scalar as a JSON value: numbers in base units, booleans, strings; timestamps in ISO 8601.
nlohmann::ordered_json json_value(const Scalar& value);

/// A Scalar as nvidia-smi-shaped JSON has it: a number in the field's CSV unit, as CSV shows it
/// (memory in whole MiB, watts with two decimals), text as CSV writes it ("P0", "Enabled",
/// "2026/11/29 18:46:37.888"), strings as they are.
nlohmann::ordered_json nvidia_smi_json_value(const Scalar& value, const FieldInfo& field);

/// Broken-down local time plus milliseconds and UTC offset: what both timestamp formats need.
struct LocalTime {
  std::tm tm{};
  int millis = 0;
  long utc_offset_s = 0;
};
LocalTime to_local_time(WallTime t);

/// "2026/11/29 18:46:37.888": nvidia-smi's timestamp format.
std::string format_csv_timestamp(const LocalTime& t);
/// "2026-11-29T18:46:37.888+01:00".
std::string format_iso_timestamp(const LocalTime& t);

}  // namespace gpumon::query
