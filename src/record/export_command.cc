// SPDX-License-Identifier: MIT
#include "record/export_command.h"

#include <charconv>
#include <map>
#include <optional>

#include "record/export_format.h"
#include "record/recording_reader.h"
#include "record/sample_stream.h"
#include "util/option_cursor.h"

namespace gpumon::record {
namespace {

constexpr const char* kUsage =
    "usage: gpumon export RUN.gpumon [--format csv|jsonl] [--metrics NAME,...] [--gpu N]\n"
    "                     [--show-uuid] [--no-units]\n"
    "       gpumon export --list-metrics   (the names --metrics takes, with unit and source)\n"
    "       gpumon export RUN.gpumon --table steps|rank_events|process_samples\n"
    "                                [--format csv|jsonl]\n"
    "  --table steps (or --steps): the training steps the agent received (docs/python.md)\n";

struct ExportArgs {
  std::string path;
  bool jsonl = false;
  std::vector<MetricId> metrics;  // empty: every metric with a value
  std::optional<unsigned> gpu;
  bool show_uuid = false;
  bool units = true;
  bool help = false;
  bool list_metrics = false;
  std::string table = "samples";
};

std::string parse_metrics(std::string_view list, std::vector<MetricId>& out) {
  while (!list.empty()) {
    const auto comma = list.find(',');
    const std::string_view name = list.substr(0, comma);
    const auto id = metric_by_name(name);
    if (!id) {
      std::string known;
      for (const MetricInfo& m : metric_catalog())
        known += (known.empty() ? "" : ", ") + std::string(m.name);
      return "unknown metric '" + std::string(name) + "'; known: " + known +
             " (`gpumon export --list-metrics` says what each is)";
    }
    out.push_back(*id);
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
  }
  return out.empty() ? "--metrics needs at least one name" : "";
}

// Empty on success, else a usage message.
std::string parse_args(const std::vector<std::string>& args, ExportArgs& a) {
  for (util::OptionCursor c(args); c.next();) {
    const std::string& opt = c.name();
    const bool value = c.has_inline_value();
    auto take = [&] { return c.value(); };
    if (opt == "-h" || opt == "--help") {
      a.help = true;
    } else if (opt == "--list-metrics" && !value) {
      a.list_metrics = true;
    } else if (opt == "--format") {
      const auto v = take();
      if (!v || (*v != "csv" && *v != "jsonl")) return "--format must be csv or jsonl";
      a.jsonl = *v == "jsonl";
    } else if (opt == "--metrics") {
      const auto v = take();
      if (!v) return "--metrics needs a list of names";
      if (auto e = parse_metrics(*v, a.metrics); !e.empty()) return e;
    } else if (opt == "--gpu") {
      const auto v = take();
      unsigned n = 0;
      if (!v || v->empty() ||
          std::from_chars(v->data(), v->data() + v->size(), n).ptr != v->data() + v->size())
        return "--gpu needs a GPU index (0, 1, ...)";
      a.gpu = n;
    } else if (opt == "--table") {
      const auto v = take();
      if (!v ||
          (*v != "samples" && *v != "steps" && *v != "rank_events" && *v != "process_samples"))
        return "--table must be samples, steps, rank_events or process_samples";
      a.table = *v;
    } else if (opt == "--steps" && !value) {
      a.table = "steps";
    } else if (opt == "--show-uuid" && !value) {
      a.show_uuid = true;
    } else if (opt == "--no-units" && !value) {
      a.units = false;
    } else if (!opt.starts_with("-") && a.path.empty() && !value) {
      a.path = opt;
    } else {
      return "unexpected argument '" + c.arg() + "'";
    }
  }
  if (a.path.empty() && !a.help && !a.list_metrics) return "which recording? give its path";
  if (a.table != "samples" && (!a.metrics.empty() || a.gpu || a.show_uuid || !a.units))
    return "--metrics, --gpu, --show-uuid and --no-units apply to samples, not --table " + a.table;
  return {};
}

// `--table steps` / `--table rank_events`: every row of that table (none in a version-1 file).
template <typename Row, typename Cells>
int export_table(const std::string& path, ReadResult<std::vector<Row>> rows,
                 const std::vector<std::string>& columns, Cells cells, bool jsonl,
                 std::ostream& out, std::ostream& err) {
  if (auto* e = std::get_if<std::string>(&rows)) {
    err << "gpumon export: " << path << ": " << *e << '\n';
    return kExportReadError;
  }
  if (!jsonl) write_table_csv_header(out, columns);
  for (const auto& row : std::get<std::vector<Row>>(rows)) {
    if (jsonl)
      write_table_jsonl_row(out, columns, cells(row));
    else
      write_table_csv_row(out, cells(row));
  }
  out.flush();
  return out ? kExportOk : kExportReadError;
}

}  // namespace

int run_export_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  ExportArgs a;
  if (auto e = parse_args(args, a); !e.empty()) {
    err << "gpumon export: " << e << '\n' << kUsage;
    return kExportUsage;
  }
  if (a.help) {
    out << kUsage;
    return kExportOk;
  }
  if (a.list_metrics) {
    write_metric_list(out);
    return out ? kExportOk : kExportReadError;
  }
  std::string error;
  auto reader = RecordingReader::open(a.path, error);
  if (reader) {  // beside the data, never in it: stdout stays the CSV or JSON lines
    if (const auto sim = reader->meta("simulated_scenario"); sim && !sim->empty())
      err << "gpumon export: " << a.path << ": SIMULATED GPUs (scenario " << *sim << ")\n";
    if (!reader->warning().empty())
      err << "gpumon export: " << a.path << ": " << reader->warning() << '\n';
  }
  if (!reader) {
    err << "gpumon export: " << error << '\n';
    return kExportReadError;
  }
  if (a.table == "steps")
    return export_table(a.path, reader->steps(), step_columns(), step_cells, a.jsonl, out, err);
  if (a.table == "rank_events")
    return export_table(a.path, reader->rank_events(), rank_event_columns(), rank_event_cells,
                        a.jsonl, out, err);
  if (a.table == "process_samples")
    return export_table(a.path, reader->process_samples(), process_sample_columns(),
                        process_sample_cells, a.jsonl, out, err);
  std::map<unsigned, std::optional<std::string>> uuids;
  for (const auto& d : reader->devices()) uuids[d.index] = d.uuid;
  if (a.gpu && !uuids.contains(*a.gpu)) {
    err << "gpumon export: " << a.path << ": no GPU " << *a.gpu << " in this recording ("
        << uuids.size() << " GPUs)\n";
    return kExportUsage;
  }
  ExportLayout layout{a.metrics, a.show_uuid, a.units};
  if (layout.metrics.empty()) {
    auto present = metrics_present(*reader, a.gpu);
    if (auto* e = std::get_if<std::string>(&present)) {
      err << "gpumon export: " << a.path << ": " << *e << '\n';
      return kExportReadError;
    }
    const auto& bits = std::get<std::vector<bool>>(present);
    for (std::size_t i = 0; i < bits.size(); ++i)
      if (bits[i]) layout.metrics.push_back(static_cast<MetricId>(i));
  }
  if (!a.jsonl) write_csv_header(out, layout);
  SampleStream stream(*reader, a.gpu);
  SampleRow row;
  while (stream.next(row)) {
    const auto& uuid = uuids[row.gpu];
    if (a.jsonl)
      write_jsonl_row(out, layout, row, uuid);
    else
      write_csv_row(out, layout, row, uuid);
  }
  out.flush();
  if (!stream.error().empty()) {
    err << "gpumon export: " << a.path << ": " << stream.error() << '\n';
    return kExportReadError;
  }
  return out ? kExportOk : kExportReadError;
}

}  // namespace gpumon::record
