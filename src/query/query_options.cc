// SPDX-License-Identifier: MIT
#include "query/query_options.h"

#include <CLI/CLI.hpp>
#include <algorithm>

#include "query/argv_rewrite.h"
#include "query/q_report.h"

namespace gpumon::query {
namespace {

struct RawOptions {
  std::optional<std::string> query_gpu;
  std::optional<std::string> query_apps;
  std::optional<std::string> format;
  std::optional<std::string> ids;
  std::optional<std::string> loop;
  std::optional<std::string> loop_ms;
  std::optional<std::string> count;
  std::optional<std::string> file;
  bool help_gpu = false;
  bool help_apps = false;
  bool list = false;
  bool report = false;
  std::optional<std::string> display;
};

// Every value is taken as text and checked by query_parse.h, so that errors name the problem in
// our words rather than CLI11's conversion messages.
void declare(CLI::App& app, RawOptions& raw) {
  app.add_option("--query-gpu", raw.query_gpu, "GPU fields to print, comma-separated")
      ->type_name("FIELDS");
  app.add_option("--query-compute-apps", raw.query_apps,
                 "Compute-process fields to print, comma-separated")
      ->type_name("FIELDS");
  app.add_option("--format", raw.format,
                 "csv[,noheader][,nounits] (default csv), json, jsonl, json-flat or jsonl-flat")
      ->type_name("FORMAT");
  app.add_option("-i,--id", raw.ids, "GPUs by index, UUID, PCI bus id or serial, comma-separated")
      ->type_name("ID[,ID...]");
  app.add_option("-l,--loop", raw.loop, "Repeat every SEC seconds (default 5), until Ctrl-C")
      ->type_name("[SEC]");
  app.add_option("--loop-ms", raw.loop_ms, "Repeat every MS milliseconds (also -lms MS)")
      ->type_name("MS");
  app.add_option("-c,--count", raw.count, "Stop after N samples")->type_name("N");
  app.add_option("-f,--filename", raw.file, "Write to FILE (overwritten) instead of stdout")
      ->type_name("FILE");
  app.add_flag("-L,--list-gpus", raw.list, "List the GPUs with their UUIDs, as nvidia-smi -L");
  app.add_flag("-q,--query", raw.report, "Print nvidia-smi -q's report of each GPU");
  app.add_option("-d,--display", raw.display,
                 "With -q: only these sections (MEMORY,UTILIZATION,ECC,TEMPERATURE,POWER,CLOCK,"
                 "COMPUTE,PIDS,PERFORMANCE,ROW_REMAPPER)")
      ->type_name("SECTIONS");
  app.add_flag("--help-query-gpu", raw.help_gpu, "List the --query-gpu fields");
  app.add_flag("--help-query-compute-apps", raw.help_apps, "List the --query-compute-apps fields");
  app.footer(
      "Output matches nvidia-smi's query mode; json and jsonl nest the fields as scripts written "
      "for nvidia-smi read them, json-flat and jsonl-flat give numbers in base units (see "
      "docs/query.md).");
}

Expected<QueryOptions> check(const RawOptions& raw) {
  QueryOptions o;
  if (raw.help_gpu || raw.help_apps) {
    o.action =
        raw.help_gpu ? QueryOptions::Action::kHelpGpuFields : QueryOptions::Action::kHelpAppFields;
    return o;
  }
  if (raw.list) {
    if (raw.query_gpu || raw.query_apps || raw.format || raw.loop || raw.loop_ms || raw.count ||
        raw.report || raw.display)
      return usage_error("-L/--list-gpus takes only -i and -f.");
    o.action = QueryOptions::Action::kListGpus;
    o.ids = raw.ids;
    if (raw.file) o.output_file = *raw.file;
    return o;
  }
  if (raw.display && !raw.report) return usage_error("-d/--display goes with -q/--query.");
  if (raw.report) {
    if (raw.query_gpu || raw.query_apps || raw.format)
      return usage_error("-q/--query prints nvidia-smi's report; it takes no fields or --format.");
    o.action = QueryOptions::Action::kReport;
    if (raw.display) {
      auto display = parse_q_display(*raw.display);
      if (!display) return display.error();
      o.display = *display;
    }
  }
  if (raw.query_gpu && raw.query_apps) {
    return usage_error("give --query-gpu or --query-compute-apps, not both.");
  }
  if (!raw.query_gpu && !raw.query_apps && !raw.report) {
    return usage_error(
        "query needs --query-gpu=FIELDS, --query-compute-apps=FIELDS or -q (gpumon query "
        "--help-query-gpu lists the fields).");
  }
  o.target = raw.query_apps ? QueryOptions::Target::kComputeApps : QueryOptions::Target::kGpus;
  if (!raw.report) o.fields = raw.query_gpu ? *raw.query_gpu : *raw.query_apps;
  if (raw.format) {
    auto format = parse_format(*raw.format);
    if (!format) return format.error();
    o.format = *format;
  }
  o.ids = raw.ids;
  if (raw.loop && raw.loop_ms) return usage_error("give -l/--loop or -lms/--loop-ms, not both.");
  if (raw.loop) {
    auto interval = parse_loop_seconds(*raw.loop);
    if (!interval) return interval.error();
    o.interval = *interval;
  }
  if (raw.loop_ms) {
    auto interval = parse_loop_ms(*raw.loop_ms);
    if (!interval) return interval.error();
    o.interval = *interval;
  }
  if (raw.count) {
    auto count = parse_count(*raw.count);
    if (!count) return count.error();
    if (*count > 1 && !o.interval) {
      return usage_error("--count " + *raw.count +
                         " needs -l/--loop or -lms/--loop-ms to space "
                         "the samples.");
    }
    o.count = *count;
  }
  if (raw.file) {
    if (raw.file->empty()) return usage_error("-f/--filename needs a file name.");
    o.output_file = *raw.file;
  }
  return o;
}

}  // namespace

Expected<QueryOptions> parse_query_options(const std::vector<std::string>& args) {
  CLI::App app("Print GPU or compute-process fields, like nvidia-smi --query-gpu.", "gpumon query");
  RawOptions raw;
  declare(app, raw);
  std::vector<std::string> reversed = rewrite_nvidia_smi_args(args);
  std::reverse(reversed.begin(), reversed.end());  // CLI11 consumes a reversed vector
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    QueryOptions o;
    o.action = QueryOptions::Action::kHelp;
    o.help_text = app.help();
    return o;
  } catch (const CLI::ParseError& e) {
    return usage_error(std::string("query: ") + e.what() +
                       "\ngpumon: run `gpumon query --help` for the options.");
  }
  return check(raw);
}

}  // namespace gpumon::query
