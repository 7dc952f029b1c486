// SPDX-License-Identifier: MIT
// The shape of one queryable field. Each of `--query-gpu` and `--query-compute-apps` has one
// registry (gpu_fields.cc, app_fields.cc): a table with one row per field holding its name,
// aliases, unit, the MetricGroups it needs, how to extract its value and how CSV renders it.
// Formatters (csv_writer.cc, json_writer.cc) only see FieldInfo and Cells.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "gpu/gpu_backend.h"
#include "gpu/reading.h"

namespace gpumon::query {

using WallTime = std::chrono::system_clock::time_point;

/// A field's value in its base unit (bytes, W, MHz, %, degrees C, J), before formatting.
using Scalar = std::variant<std::string, std::uint64_t, std::int64_t, double, bool, WallTime>;
/// A value or the reason it is missing.
using Cell = Reading<Scalar>;

/// How the CSV formatter renders a Scalar (nvidia-smi's conventions, checked against the H200
/// capture in testdata/nvidia-smi/h200).
enum class CsvStyle : std::uint8_t {
  kPlain,      ///< text as is, integers in decimal
  kMib,        ///< bytes shown as whole MiB, rounded up like nvidia-smi: "143771"
  kFixed2,     ///< two decimals: "78.91" (watts)
  kFixed3,     ///< three decimals: "1234.567" (joules)
  kPstate,     ///< "P0"
  kHexMask,    ///< 64-bit mask: "0x0000000000000001"
  kEnabled,    ///< "Enabled" / "Disabled"
  kActive,     ///< "Active" / "Not Active"
  kTimestamp,  ///< local time "2026/11/29 18:46:37.888"
};

/// What formatters and help text need to know about a field.
struct FieldInfo {
  std::string_view name;                  ///< canonical nvidia-smi name, e.g. "memory.used"
  std::vector<std::string_view> aliases;  ///< other accepted names, e.g. "clocks.sm"
  std::string_view csv_unit;   ///< shown in the header "[MiB]" and after values; "" for none
  std::string_view json_unit;  ///< unit of the JSON number ("bytes", "W"); "" when not a number
  CsvStyle csv = CsvStyle::kPlain;
  std::string_view description;  ///< one line, for --help-query-*
  /// nvidia-smi prints "[N/A]" rather than "[Not Supported]" for this field (fan.speed on the
  /// H200). JSON keeps the true reason.
  bool not_supported_reads_na = false;
  bool extension = false;  ///< gpumon's own field; nvidia-smi does not have it
  /// Its dotted path in nvidia-smi-shaped JSON where that differs from `name`: "product_name"
  /// (as `nvidia-smi -q` names it), or a path no other field's path lies under
  /// ("power.draw.instant" would need "power.draw" to be both a value and an object).
  std::string_view json_path = {};
};

/// `field`'s dotted path in nvidia-smi-shaped JSON: json_path, else its name.
inline std::string_view nested_json_path(const FieldInfo& field) {
  return field.json_path.empty() ? field.name : field.json_path;
}

/// A registry row: FieldInfo plus how to get the value from a `Source` (one row of output).
template <typename Source>
struct FieldSpec {
  FieldInfo info;
  MetricSet needs;  ///< MetricGroups the backend must read for this field; empty for static data
  Cell (*extract)(const Source&) = nullptr;
};

/// CSV header of a field: its name, plus " [unit]" when it has one ("memory.used [MiB]").
std::string csv_header(const FieldInfo& field);

/// Finds a field by canonical name or alias (exact, case-sensitive, as nvidia-smi).
template <typename Source>
const FieldSpec<Source>* find_field(const std::vector<FieldSpec<Source>>& table,
                                    std::string_view name) {
  for (const auto& spec : table) {
    if (spec.info.name == name) return &spec;
    for (std::string_view alias : spec.info.aliases) {
      if (alias == name) return &spec;
    }
  }
  return nullptr;
}

/// Converts a backend Reading to a Cell, keeping its Missing reason.
template <typename T, typename Convert>
Cell to_cell(const Reading<T>& reading, Convert convert) {
  if (!reading.has_value()) return Cell::missing(reading.why());
  return Cell(Scalar(convert(*reading)));
}

/// Unsigned readings become 64-bit integers; text and floating point keep their type.
Cell to_cell(const Reading<unsigned>& reading);
Cell to_cell(const Reading<std::uint64_t>& reading);
Cell to_cell(const Reading<int>& reading);
Cell to_cell(const Reading<std::string>& reading);
Cell to_cell(const Reading<double>& reading);
Cell to_cell(const Reading<bool>& reading);

}  // namespace gpumon::query
