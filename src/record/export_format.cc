// SPDX-License-Identifier: MIT
#include "record/export_format.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "record/recording_types.h"

namespace gpumon::record {
namespace {

// CSV quoting (RFC 4180) for free text: the uuid, a step's device, a rank event's JSON.
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

void write_metric_list(std::ostream& out) {
  // Columns, not bytes: units such as "°C" are UTF-8.
  auto columns = [](std::string_view t) {
    return static_cast<std::size_t>(
        std::count_if(t.begin(), t.end(), [](char c) { return (c & 0xC0) != 0x80; }));
  };
  std::size_t name_w = 4, unit_w = 4, source_w = 6;
  for (const MetricInfo& m : metric_catalog()) {
    name_w = std::max(name_w, columns(m.name));
    unit_w = std::max(unit_w, columns(m.unit));
    source_w = std::max(source_w, columns(m.source));
  }
  auto cell = [&](std::string_view text, std::size_t width) {
    return std::string(text) + std::string(width + 2 - columns(text), ' ');
  };
  auto row = [&](std::string_view name, std::string_view unit, std::string_view source,
                 std::string_view window) {
    out << cell(name, name_w) << cell(unit, unit_w) << cell(source, source_w) << window << '\n';
  };
  row("name", "unit", "source", "window");
  for (const MetricInfo& m : metric_catalog()) row(m.name, m.unit, m.source, m.window);
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

Cell int_cell(std::optional<std::int64_t> v) {
  Cell c;
  if (v) c = Cell{Cell::Kind::kInt, *v, 0, {}};
  return c;
}

Cell number_cell(std::optional<double> v) {
  Cell c;
  if (v && std::isfinite(*v)) c = Cell{Cell::Kind::kNumber, 0, *v, {}};
  return c;
}

Cell text_cell(std::optional<std::string> v) {
  Cell c;
  if (v) c = Cell{Cell::Kind::kText, 0, 0, std::move(*v)};
  return c;
}

Cell json_cell(std::string json) {
  return Cell{Cell::Kind::kJson, 0, 0, std::move(json)};
}

const std::vector<std::string>& step_columns() {
  static const std::vector<std::string> columns = {"timestamp",
                                                   "pid",
                                                   "rank",
                                                   "local_rank",
                                                   "world_size",
                                                   "device",
                                                   "step",
                                                   "t_start_s",
                                                   "t_end_s",
                                                   "cpu_step_s",
                                                   "gpu_step_s",
                                                   "data_wait_s",
                                                   "allocated_bytes",
                                                   "reserved_bytes",
                                                   "active_bytes",
                                                   "inactive_split_bytes",
                                                   "allocated_peak_bytes",
                                                   "reserved_peak_bytes",
                                                   "num_alloc_retries",
                                                   "num_ooms"};
  return columns;
}

std::vector<Cell> step_cells(const training::Step& s) {
  // `timestamp` is the step's end in the GPU export's format, so the two tables join on it;
  // t_start_s and t_end_s keep the process's full precision.
  return {text_cell(format_iso_ms(std::llround(s.t_end_s * 1000))),
          int_cell(s.pid),
          int_cell(s.rank),
          int_cell(s.local_rank),
          int_cell(s.world_size),
          text_cell(s.device),
          int_cell(s.step),
          number_cell(s.t_start_s),
          number_cell(s.t_end_s),
          number_cell(s.cpu_step_s),
          number_cell(s.gpu_step_s),
          number_cell(s.data_wait_s),
          int_cell(s.allocated_bytes),
          int_cell(s.reserved_bytes),
          int_cell(s.active_bytes),
          int_cell(s.inactive_split_bytes),
          int_cell(s.allocated_peak_bytes),
          int_cell(s.reserved_peak_bytes),
          int_cell(s.num_alloc_retries),
          int_cell(s.num_ooms)};
}

const std::vector<std::string>& rank_event_columns() {
  static const std::vector<std::string> columns = {"timestamp", "pid", "rank", "kind", "detail"};
  return columns;
}

std::vector<Cell> rank_event_cells(const training::RankEvent& e) {
  return {text_cell(format_iso_ms(e.time_ms)), int_cell(e.pid), int_cell(e.rank), text_cell(e.kind),
          json_cell(e.detail)};
}

const std::vector<std::string>& process_sample_columns() {
  static const std::vector<std::string> columns = {"timestamp",
                                                   "pid",
                                                   "rank",
                                                   "cpu_s",
                                                   "rss_bytes",
                                                   "pss_bytes",
                                                   "pss_is_rss",
                                                   "workers",
                                                   "workers_cpu_s",
                                                   "workers_pss_bytes",
                                                   "mem_available_bytes",
                                                   "mem_total_bytes",
                                                   "cgroup_limit_bytes",
                                                   "cgroup_usage_bytes"};
  return columns;
}

std::vector<Cell> process_sample_cells(const training::ProcessSample& s) {
  return {text_cell(format_iso_ms(s.time_ms)),
          int_cell(s.pid),
          int_cell(s.rank),
          number_cell(s.cpu_s),
          int_cell(s.rss_bytes),
          int_cell(s.pss_bytes),
          int_cell(s.pss_is_rss ? 1 : 0),
          int_cell(s.workers),
          number_cell(s.workers_cpu_s),
          int_cell(s.workers_pss_bytes),
          int_cell(s.mem_available_bytes),
          int_cell(s.mem_total_bytes),
          int_cell(s.cgroup_limit_bytes),
          int_cell(s.cgroup_usage_bytes)};
}

void write_table_csv_header(std::ostream& out, const std::vector<std::string>& columns) {
  std::string line;
  for (const auto& c : columns) line += (line.empty() ? "" : ",") + c;
  out << line << '\n';
}

void write_table_csv_row(std::ostream& out, const std::vector<Cell>& cells) {
  std::string line;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    if (i != 0) line += ',';
    const Cell& c = cells[i];
    switch (c.kind) {
      case Cell::Kind::kMissing: break;
      case Cell::Kind::kInt: line += std::to_string(c.i); break;
      case Cell::Kind::kNumber: line += format_number(c.d); break;
      case Cell::Kind::kText:
      case Cell::Kind::kJson: line += csv_cell(c.s); break;
    }
  }
  out << line << '\n';
}

void write_table_jsonl_row(std::ostream& out, const std::vector<std::string>& columns,
                           const std::vector<Cell>& cells) {
  std::string line = "{";
  for (std::size_t i = 0; i < cells.size() && i < columns.size(); ++i) {
    if (i != 0) line += ',';
    line += json_string(columns[i]) + ':';
    const Cell& c = cells[i];
    switch (c.kind) {
      case Cell::Kind::kMissing: line += "null"; break;
      case Cell::Kind::kInt: line += std::to_string(c.i); break;
      case Cell::Kind::kNumber: line += format_number(c.d); break;
      case Cell::Kind::kText: line += json_string(c.s); break;
      case Cell::Kind::kJson: line += c.s.empty() ? "null" : c.s; break;
    }
  }
  out << line << "}\n";
}

}  // namespace gpumon::record
