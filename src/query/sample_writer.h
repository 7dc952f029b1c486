// SPDX-License-Identifier: MIT
// Formatters over plain data: a SampleTable (rows of Cells) goes out as nvidia-smi CSV, as one
// JSON document per sample, or as one JSON line per sample (nvidia-smi-shaped or flat). They never
// touch a GPU, so tests feed them hand-made tables.
#pragma once

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "query/field.h"
#include "query/query_parse.h"

namespace gpumon::query {

/// One sample of a query: a row per GPU (or per process), a Cell per requested field.
struct SampleTable {
  WallTime time{};  ///< when reading this sample began
  std::vector<std::vector<Cell>> rows;
};

/// What every writer needs besides the samples.
struct WriterSetup {
  std::vector<const FieldInfo*> columns;  ///< requested fields, in order, duplicates kept
  bool process_rows = false;              ///< rows are processes (--query-compute-apps)
  std::string simulated_scenario;         ///< non-empty: JSON documents carry "simulated"
};

class SampleWriter {
 public:
  virtual ~SampleWriter() = default;
  /// Writes what precedes the first sample (the CSV header, unless noheader).
  virtual void begin(std::ostream& out) = 0;
  /// Writes one sample. The caller flushes.
  virtual void write(const SampleTable& sample, std::ostream& out) = 0;
};

std::unique_ptr<SampleWriter> make_csv_writer(WriterSetup setup, bool header, bool units);
/// `lines` true: jsonl (one compact object per line); false: indented documents. `flat`: gpumon's
/// flat rows in base units; else nvidia-smi's nested shape and units (json_writer.cc).
std::unique_ptr<SampleWriter> make_json_writer(WriterSetup setup, bool lines, bool flat);

/// The writer --format asks for.
std::unique_ptr<SampleWriter> make_writer(const OutputFormat& format, WriterSetup setup);

}  // namespace gpumon::query
