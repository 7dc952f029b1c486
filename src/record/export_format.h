// SPDX-License-Identifier: MIT
// Formatters of exported samples: CSV (header once, empty cell for a missing value) and JSONL
// (one object per line, null for a missing value). Numbers print in the shortest form that reads
// back to the same double, always with '.', whatever the locale.
// Thread-safety: pure functions over their arguments.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "gpu/metric_catalog.h"
#include "record/sample_stream.h"

namespace gpumon::record {

struct ExportLayout {
  std::vector<MetricId> metrics;  ///< columns, in order
  bool with_uuid = false;         ///< a uuid column after gpu (hidden by default: sensitive)
  bool with_units = true;         ///< CSV header "power_draw_w [W]" rather than "power_draw_w"
};

/// "450.123", "118000000000", "-3"; never exponent notation.
std::string format_number(double v);

void write_csv_header(std::ostream& out, const ExportLayout& layout);
/// `uuid` is used only when layout.with_uuid (empty cell / null when nullopt).
void write_csv_row(std::ostream& out, const ExportLayout& layout, const SampleRow& row,
                   const std::optional<std::string>& uuid);
void write_jsonl_row(std::ostream& out, const ExportLayout& layout, const SampleRow& row,
                     const std::optional<std::string>& uuid);

}  // namespace gpumon::record
