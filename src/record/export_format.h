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
#include "record/recording_types.h"
#include "record/sample_stream.h"

namespace gpumon::record {

struct ExportLayout {
  std::vector<MetricId> metrics;  ///< columns, in order
  bool with_uuid = false;         ///< a uuid column after gpu (hidden by default: sensitive)
  bool with_units = true;         ///< CSV header "power_draw_w [W]" rather than "power_draw_w"
};

/// "450.123", "118000000000", "-3"; never exponent notation.
std::string format_number(double v);

/// `gpumon export --list-metrics`: one line per catalog metric, "name  unit  source  window".
void write_metric_list(std::ostream& out);

void write_csv_header(std::ostream& out, const ExportLayout& layout);
/// `uuid` is used only when layout.with_uuid (empty cell / null when nullopt).
void write_csv_row(std::ostream& out, const ExportLayout& layout, const SampleRow& row,
                   const std::optional<std::string>& uuid);
void write_jsonl_row(std::ostream& out, const ExportLayout& layout, const SampleRow& row,
                     const std::optional<std::string>& uuid);

/// One cell of a table export (steps, rank events): missing, an integer, a number, text, or
/// text that already is JSON (written as is in JSONL, quoted in CSV).
struct Cell {
  enum class Kind { kMissing, kInt, kNumber, kText, kJson } kind = Kind::kMissing;
  std::int64_t i = 0;
  double d = 0;
  std::string s;
};
Cell int_cell(std::optional<std::int64_t> v);
Cell number_cell(std::optional<double> v);
Cell text_cell(std::optional<std::string> v);
Cell json_cell(std::string json);

/// Column names of `gpumon export --table steps` and one row of it.
const std::vector<std::string>& step_columns();
std::vector<Cell> step_cells(const training::Step& s);
/// Column names of `gpumon export --table rank_events` and one row of it.
const std::vector<std::string>& rank_event_columns();
std::vector<Cell> rank_event_cells(const training::RankEvent& e);
/// Column names of `gpumon export --table process_samples` and one row of it.
const std::vector<std::string>& process_sample_columns();
std::vector<Cell> process_sample_cells(const training::ProcessSample& s);

void write_table_csv_header(std::ostream& out, const std::vector<std::string>& columns);
/// CSV: an empty cell for a missing value. JSONL: null for it.
void write_table_csv_row(std::ostream& out, const std::vector<Cell>& cells);
void write_table_jsonl_row(std::ostream& out, const std::vector<std::string>& columns,
                           const std::vector<Cell>& cells);

}  // namespace gpumon::record
