// SPDX-License-Identifier: MIT
// nvidia-smi's CSV: cells joined by ", " (no quoting), header once, units in header brackets
// even with nounits, values with units unless nounits.
#include <string_view>

#include "query/sample_writer.h"
#include "query/value_format.h"

namespace gpumon::query {
namespace {

constexpr std::string_view kSeparator = ", ";

void put(std::ostream& out, std::string_view text) {
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
}

class CsvWriter final : public SampleWriter {
 public:
  CsvWriter(WriterSetup setup, bool header, bool units)
      : setup_(std::move(setup)), header_(header), units_(units) {}

  void begin(std::ostream& out) override {
    if (!header_) return;
    std::string line;
    for (std::size_t i = 0; i < setup_.columns.size(); ++i) {
      if (i > 0) line += kSeparator;
      line += csv_header(*setup_.columns[i]);
    }
    line += '\n';
    put(out, line);
  }

  void write(const SampleTable& sample, std::ostream& out) override {
    std::string text;
    for (const auto& row : sample.rows) {
      for (std::size_t i = 0; i < row.size() && i < setup_.columns.size(); ++i) {
        if (i > 0) text += kSeparator;
        text += csv_cell(row[i], *setup_.columns[i], units_);
      }
      text += '\n';
    }
    put(out, text);
  }

 private:
  WriterSetup setup_;
  bool header_;
  bool units_;
};

}  // namespace

std::unique_ptr<SampleWriter> make_csv_writer(WriterSetup setup, bool header, bool units) {
  return std::make_unique<CsvWriter>(std::move(setup), header, units);
}

std::unique_ptr<SampleWriter> make_writer(const OutputFormat& format, WriterSetup setup) {
  switch (format.kind) {
    case OutputFormat::Kind::kCsv:
      return make_csv_writer(std::move(setup), format.header, format.units);
    case OutputFormat::Kind::kJson: return make_json_writer(std::move(setup), false, format.flat);
    case OutputFormat::Kind::kJsonLines:
      return make_json_writer(std::move(setup), true, format.flat);
  }
  return make_csv_writer(std::move(setup), format.header, format.units);
}

}  // namespace gpumon::query
