// SPDX-License-Identifier: MIT
#include "query/query_command.h"

#include <chrono>
#include <ctime>
#include <exception>
#include <fstream>
#include <optional>

#include "gpu/nvml_backend.h"
#include "query/device_select.h"
#include "query/field_help.h"
#include "query/loop_schedule.h"
#include "query/output_loop.h"
#include "query/q_report.h"
#include "query/query_options.h"
#include "query/table_reader.h"
#include "util/stop_signals.h"

namespace gpumon::query {
namespace {

void put(std::ostream& stream, std::string_view text) {
  stream.write(text.data(), static_cast<std::streamsize>(text.size()));
  stream.flush();
}

int report(std::ostream& err, const QueryError& error) {
  put(err, error.message);
  return error.exit_code;
}

// The requested fields, resolved against the registry of the query's target.
struct Plan {
  std::vector<const GpuField*> gpu_fields;
  std::vector<const AppField*> app_fields;
  std::vector<const FieldInfo*> columns;
};

Expected<Plan> plan_fields(const QueryOptions& o) {
  Plan plan;
  if (o.target == QueryOptions::Target::kGpus) {
    auto fields = resolve_fields(gpu_fields(), o.fields, "--query-gpu");
    if (!fields) return fields.error();
    plan.gpu_fields = *fields;
    for (const GpuField* f : plan.gpu_fields) plan.columns.push_back(&f->info);
  } else {
    auto fields = resolve_fields(app_fields(), o.fields, "--query-compute-apps");
    if (!fields) return fields.error();
    plan.app_fields = *fields;
    for (const AppField* f : plan.app_fields) plan.columns.push_back(&f->info);
  }
  return plan;
}

// nvidia-smi -L's line: the UUID is what scripts take from it (CUDA_VISIBLE_DEVICES=GPU-...),
// and asking for the list is asking for it.
std::string gpu_list_line(unsigned index, const DeviceStatic& d) {
  return "GPU " + std::to_string(index) + ": " + d.name.value_or("Unknown") +
         " (UUID: " + d.uuid.value_or("N/A") + ")\n";
}

// One -q report of `devices`: the sample and the extra reads its sections show.
std::string read_report(unsigned display, GpuBackend& backend,
                        const std::vector<unsigned>& devices) {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  QHeader header;
  localtime_r(&now, &header.local);
  header.system = &backend.system();
  header.attached = backend.device_count();
  const MetricSet metrics = q_metrics(display);
  std::vector<QGpu> gpus;
  for (unsigned i : devices) {
    QGpu& g = gpus.emplace_back();
    g.device = &backend.device(i);
    g.sample = backend.sample(i, metrics);
    if (q_needs_pcie(display)) g.pcie = backend.pcie_throughput(i);
    if (q_needs_processes(display)) g.processes = backend.processes(i);
    if (q_needs_report_details(display)) g.details = backend.report_details(i);
    for (DriverBuffer b : q_buffers(display)) g.buffer(b) = backend.read_driver_samples(i, b);
  }
  return q_report(header, gpus, display);
}

// Samples and writes until done, stopped, or the output fails; returns the exit status.
int sample_loop(const QueryOptions& o, const Plan& plan, GpuBackend& backend,
                std::vector<unsigned> devices, std::ostream& sink, std::ostream& err,
                LoopClock& clock) {
  if (o.action == QueryOptions::Action::kReport) {
    return write_loop(
        clock, o.interval, o.samples(), sink, err, [](std::ostream&) {},
        [&](std::ostream& s) { s << read_report(o.display, backend, devices); });
  }
  WriterSetup setup{plan.columns, o.target == QueryOptions::Target::kComputeApps,
                    backend.system().simulated_scenario};
  auto writer = make_writer(o.format, std::move(setup));
  std::function<SampleTable()> read;
  std::optional<GpuTableReader> gpus;
  std::optional<AppTableReader> apps;
  if (o.target == QueryOptions::Target::kGpus) {
    gpus.emplace(backend, std::move(devices), plan.gpu_fields);
    read = [&] { return gpus->read(); };
  } else {
    apps.emplace(backend, std::move(devices), plan.app_fields, err);
    read = [&] { return apps->read(); };
  }
  return write_loop(
      clock, o.interval, o.samples(), sink, err, [&](std::ostream& s) { writer->begin(s); },
      [&](std::ostream& s) { writer->write(read(), s); });
}

int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
        const detail::QueryEnvironment& env) {
  auto options = parse_query_options(args);
  if (!options) return report(err, options.error());
  const QueryOptions& o = *options;
  switch (o.action) {
    case QueryOptions::Action::kHelp: put(out, o.help_text); return kExitOk;
    case QueryOptions::Action::kHelpGpuFields: put(out, gpu_fields_help()); return kExitOk;
    case QueryOptions::Action::kHelpAppFields: put(out, app_fields_help()); return kExitOk;
    case QueryOptions::Action::kQuery:
    case QueryOptions::Action::kListGpus:
    case QueryOptions::Action::kReport: break;
  }
  Plan plan;
  if (o.action == QueryOptions::Action::kQuery) {
    auto fields = plan_fields(o);  // before touching a GPU: a typo fails fast
    if (!fields) return report(err, fields.error());
    plan = std::move(*fields);
  }

  QueryError open_error;
  std::unique_ptr<GpuBackend> backend = env.open_backend(&open_error);
  if (!backend) return report(err, open_error);
  if (!backend->system().simulated_scenario.empty()) {
    put(err, "gpumon: simulated GPUs (scenario " + backend->system().simulated_scenario + ")\n");
  }
  auto devices = choose_devices(o.ids, *backend);
  if (!devices) return report(err, devices.error());

  std::ofstream file;
  std::ostream* sink_ptr = &out;
  if (!o.output_file.empty()) {
    auto opened = open_output_file(o.output_file, file);
    if (!opened) return report(err, opened.error());
    sink_ptr = *opened;
  }
  std::ostream& sink = *sink_ptr;
  if (o.action == QueryOptions::Action::kListGpus) {
    for (unsigned i : *devices) sink << gpu_list_line(i, backend->device(i));
    sink.flush();
    return sink.good() ? kExitOk : kExitIoError;
  }

  if (env.clock != nullptr) {
    return sample_loop(o, plan, *backend, std::move(*devices), sink, err, *env.clock);
  }
  const util::ScopedStopSignals signals;
  SteadyLoopClock clock;
  return sample_loop(o, plan, *backend, std::move(*devices), sink, err, clock);
}

}  // namespace

namespace detail {

QueryError open_failure(const NvmlOpenError& e) {
  int code = kExitOther;
  switch (e.kind) {
    case NvmlOpenError::Kind::kNoDriver: code = kExitDriverNotLoaded; break;
    case NvmlOpenError::Kind::kBadLibrary: code = kExitLibraryNotFound; break;
    case NvmlOpenError::Kind::kInitFailed:
      code = e.nvml_code == NVML_ERROR_DRIVER_NOT_LOADED ? kExitDriverNotLoaded
             : e.nvml_code == NVML_ERROR_NO_PERMISSION   ? kExitNoPermission
                                                         : kExitOther;
      break;
  }
  return QueryError{code, "gpumon: " + e.message + "\n"};
}

QueryEnvironment nvml_environment() {
  QueryEnvironment env;
  env.open_backend = [](QueryError* error) -> std::unique_ptr<GpuBackend> {
    NvmlOpenError open_error;
    std::unique_ptr<GpuBackend> backend = NvmlBackend::open(NvmlOpenOptions{}, &open_error);
    if (!backend && error != nullptr) *error = open_failure(open_error);
    return backend;
  };
  return env;
}

int run_query_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
                      const QueryEnvironment& env) {
  try {
    return run(args, out, err, env);
  } catch (const std::exception& e) {  // bad_alloc and the like: report, never crash the caller
    put(err, std::string("gpumon: query failed: ") + e.what() + "\n");
    return kExitIoError;
  }
}

}  // namespace detail

int run_query_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  return detail::run_query_command(args, out, err, detail::nvml_environment());
}

}  // namespace gpumon::query
