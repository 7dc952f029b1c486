// SPDX-License-Identifier: MIT
#include "record/export_format.h"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "record/recording_types.h"

namespace gpumon::record {
namespace {

// CSV quoting (RFC 4180) for the only free text we print: the uuid.
std::string csv_cell(std::string_view s) {
  if (s.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + '"';
}

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + '"';
}

}  // namespace

std::string format_number(double v) {
  if (!std::isfinite(v)) return {};  // never stored; printed as missing if it ever appears
  char buf[400];
  const auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed);
  if (r.ec != std::errc()) return {};
  return std::string(buf, r.ptr);
}

void write_csv_header(std::ostream& out, const ExportLayout& layout) {
  std::string line = "timestamp,gpu";
  if (layout.with_uuid) line += ",uuid";
  for (auto id : layout.metrics) {
    const auto& m = metric_info(id);
    line += ',';
    line += m.name;
    if (layout.with_units && !m.unit.empty()) {
      line += " [";
      line += m.unit;
      line += ']';
    }
  }
  out << line << '\n';
}

void write_csv_row(std::ostream& out, const ExportLayout& layout, const SampleRow& row,
                   const std::optional<std::string>& uuid) {
  std::string line = format_iso_ms(row.time_ms) + ',' + std::to_string(row.gpu);
  if (layout.with_uuid) line += ',' + (uuid ? csv_cell(*uuid) : std::string());
  for (auto id : layout.metrics) {
    line += ',';
    if (const auto& v = row.values[static_cast<std::size_t>(id)]) line += format_number(*v);
  }
  out << line << '\n';
}

void write_jsonl_row(std::ostream& out, const ExportLayout& layout, const SampleRow& row,
                     const std::optional<std::string>& uuid) {
  std::string line =
      "{\"timestamp\":\"" + format_iso_ms(row.time_ms) + "\",\"gpu\":" + std::to_string(row.gpu);
  if (layout.with_uuid) line += ",\"uuid\":" + (uuid ? json_string(*uuid) : std::string("null"));
  for (auto id : layout.metrics) {
    line += ",\"";
    line += metric_info(id).name;
    line += "\":";
    const auto& v = row.values[static_cast<std::size_t>(id)];
    const std::string num = v ? format_number(*v) : std::string();
    line += num.empty() ? "null" : num;
  }
  out << line << "}\n";
}

}  // namespace gpumon::record
