// SPDX-License-Identifier: MIT
// /metrics: self-health first, then one family at a time over every GPU (contiguous groups).
#include <chrono>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "exporter/metric_names.h"
#include "exporter/renderers.h"
#include "gpu/xid.h"

namespace gpumon::exporter {
namespace {

constexpr auto kGauge = MetricType::kGauge;
constexpr auto kCounter = MetricType::kCounter;

void render_self(const ExporterView& v, const ExporterOptions& o, ExpositionWriter& w) {
  w.family("gpumon_build_info", "gpumon version and git revision", kGauge);
  w.sample({{"version", o.version}, {"revision", o.revision}}, 1);
  w.family("gpumon_up", "1 while the sampler's newest tick is younger than 3 intervals + 5 s",
           kGauge);
  w.sample({}, v.up ? 1 : 0);
  w.family("gpumon_simulated", "1 when the GPUs are simulated by gpumon's fake NVML", kGauge);
  w.sample({}, v.system.simulated_scenario.empty() ? 0 : 1);
  w.family("gpumon_gpus", "GPUs NVML reports", kGauge);
  w.sample({}, static_cast<double>(v.devices.size()));
  if (v.have_tick) {
    w.family("gpumon_last_sample_timestamp_seconds", "Unix time of the sampler's newest tick",
             kGauge);
    w.sample({}, unix_seconds(v.last_tick_wall));
  }
  w.family("gpumon_last_sample_age_seconds",
           "Seconds since the sampler's newest tick (since start before the first), as of the "
           "render of this body (cached for at most 1 s)",
           kGauge);
  w.sample({}, v.last_tick_age_s);
  if (v.have_tick) {
    w.family("gpumon_sample_duration_seconds", "Duration of the sampler's newest tick", kGauge);
    w.sample({}, v.stats.last_tick_duration_us / 1e6);
  }
  w.family("gpumon_sampler_interval_seconds", "Time between sampler ticks", kGauge);
  w.sample({}, std::chrono::duration<double>(v.config.interval).count());
  w.family("gpumon_sampler_ticks_total", "Sampler ticks since start", kCounter);
  w.sample({}, static_cast<double>(v.stats.ticks));
  w.family("gpumon_sampler_overruns_total", "Ticks that took longer than the interval", kCounter);
  w.sample({}, static_cast<double>(v.stats.overruns));
  w.family("gpumon_nvml_errors_total", "NVML readings that failed with an error", kCounter);
  w.sample({}, static_cast<double>(v.stats.nvml_errors));
  w.family("gpumon_sampler_cpu_seconds_total", "CPU time of the sampler thread", kCounter);
  w.sample({}, v.stats.thread_cpu_s);
  w.family("gpumon_http_requests_total", "HTTP requests answered, by status code", kCounter);
  for (const auto& [code, n] : v.http.requests) {
    const std::string c = std::to_string(code);
    w.sample({{"code", c}}, static_cast<double>(n));
  }
  w.family("gpumon_http_rejected_total", "HTTP connections or requests refused, by reason",
           kCounter);
  for (const auto& [reason, n] : v.http.rejected) w.sample({{"reason", reason}}, n);
}

// Missing facts become empty label values, which Prometheus treats as an absent label.
std::string text_or_empty(const Reading<std::string>& r) {
  return r ? r.value() : std::string();
}

void render_info(const ExporterView& v, const ExporterOptions& o, ExpositionWriter& w) {
  w.family("gpumon_gpu_info", "GPU identity; join with * on(gpu) group_left(name)", kGauge);
  const std::string driver = text_or_empty(v.system.driver_version);
  const std::string cuda =
      v.system.cuda_driver_version ? cuda_version(v.system.cuda_driver_version.value()) : "";
  for (const DeviceStatic& d : v.devices) {
    const std::string gpu = std::to_string(d.index);
    const std::string name = text_or_empty(d.name);
    const std::string bus = text_or_empty(d.pci_bus_id);
    std::vector<Label> labels{{"gpu", gpu},
                              {"name", name},
                              {"pci_bus_id", bus},
                              {"driver_version", driver},
                              {"cuda_version", cuda}};
    const std::string uuid = o.show_uuid ? text_or_empty(d.uuid) : std::string();
    if (o.show_uuid) labels.push_back({"uuid", uuid});
    w.sample(labels, 1);
  }
}

void render_clock_events(const ExporterView& v, ExpositionWriter& w) {
  w.family("gpumon_gpu_clock_event_active",
           "1 while the clock-event (throttle) reason holds, else 0 (from "
           "nvmlDeviceGetCurrentClocksEventReasons; instant; newest sample)",
           kGauge);
  for (unsigned i = 0; i < v.gpus.size(); ++i) {
    const GpuState* g = v.gpu(i);
    const std::optional<double> reasons =
        g != nullptr ? g->known.value(MetricId::kClockEventReasons) : std::nullopt;
    if (!reasons) continue;
    const auto mask = static_cast<std::uint64_t>(*reasons);
    const std::string gpu = std::to_string(i);
    std::uint64_t known = 0;
    for (const auto& [bit, reason] : clock_event_reasons()) {
      known |= bit;
      w.sample({{"gpu", gpu}, {"reason", reason}}, (mask & bit) != 0 ? 1 : 0);
    }
    if ((mask & ~known) != 0) w.sample({{"gpu", gpu}, {"reason", "other"}}, 1);
  }
}

// One family with a reason label (the names of gpumon_gpu_clock_event_active), so
// rate(...[5m]) by reason is the share of time each reason held the clocks down.
void render_clock_event_time(const ExporterView& v, ExpositionWriter& w) {
  w.family("gpumon_gpu_clock_event_seconds_total",
           "Time the clock-event (throttle) reason held the clocks down since the driver loaded, "
           "seconds (from nvmlDeviceGetFieldValues 74, 76, 269-271; newest sample)",
           kCounter);
  for (unsigned i = 0; i < v.gpus.size(); ++i) {
    const GpuState* g = v.gpu(i);
    if (g == nullptr) continue;
    const std::string gpu = std::to_string(i);
    for (const ClockEventTimer& t : kClockEventTimers) {
      const std::optional<double> value = g->known.value(t.metric);
      if (!value) continue;
      w.sample({{"gpu", gpu}, {"reason", clock_event_reason_names(t.reason).at(0)}}, *value);
    }
  }
}

// Stale is not lost: the GPU's reader is inside an NVML call that has not returned (a hung
// driver call), so its values are dropped until the call returns.
void render_stale(const ExporterView& v, ExpositionWriter& w) {
  w.family("gpumon_gpu_stale",
           "1 while an NVML call on the GPU has not returned (its values are missing), else 0",
           kGauge);
  for (unsigned i = 0; i < v.gpus.size(); ++i) {
    const GpuState* g = v.gpu(i);
    if (g != nullptr) w.sample({{"gpu", std::to_string(i)}}, g->stale_call ? 1 : 0);
  }
  w.family("gpumon_gpu_stale_call_seconds",
           "How long the call a stale GPU is inside has run, seconds; call = the NVML function "
           "(or the sampler's task when the backend cannot name it)",
           kGauge);
  for (unsigned i = 0; i < v.gpus.size(); ++i) {
    const GpuState* g = v.gpu(i);
    if (g == nullptr || !g->stale_call) continue;
    w.sample({{"gpu", std::to_string(i)}, {"call", *g->stale_call}}, g->stale_for_s);
  }
}

void render_events(const ExporterView& v, ExpositionWriter& w) {
  w.family("gpumon_gpu_xid_errors_total",
           "XID errors since gpumon started, by XID and its class (application, hardware, "
           "unknown)",
           kCounter);
  for (unsigned i = 0; i < v.gpus.size(); ++i) {
    const std::string gpu = std::to_string(i);
    for (const auto& [xid, n] : v.gpus[i].xid_counts) {
      const std::string x = std::to_string(xid);
      // The class is gpu/xid.h's, the one the diagnoses use: the alert rules select on it.
      const std::string c(xid_class_name(xid_info(xid).xid_class));
      w.sample({{"gpu", gpu}, {"xid", x}, {"class", c}}, static_cast<double>(n));
    }
  }
  w.family("gpumon_gpu_xid_last_timestamp_seconds", "Unix time of the GPU's newest XID", kGauge);
  for (unsigned i = 0; i < v.gpus.size(); ++i) {
    if (!v.gpus[i].last_xid) continue;
    w.sample({{"gpu", std::to_string(i)}}, unix_seconds(v.gpus[i].last_xid_time));
  }
  w.family("gpumon_gpu_ecc_events_total", "ECC error events since gpumon started, by severity",
           kCounter);
  for (unsigned i = 0; i < v.gpus.size(); ++i) {
    const std::string gpu = std::to_string(i);
    const GpuState& g = v.gpus[i];
    if (g.ecc_single_bit_events > 0) {
      w.sample({{"gpu", gpu}, {"severity", "single_bit"}},
               static_cast<double>(g.ecc_single_bit_events));
    }
    if (g.ecc_double_bit_events > 0) {
      w.sample({{"gpu", gpu}, {"severity", "double_bit"}},
               static_cast<double>(g.ecc_double_bit_events));
    }
  }
}

void render_processes(const ExporterView& v, ExpositionWriter& w) {
  w.family("gpumon_gpu_processes", "Compute processes on the GPU (newest process list)", kGauge);
  for (unsigned i = 0; i < v.gpus.size(); ++i) {
    const GpuState* g = v.gpu(i);
    if (g == nullptr || !g->has_processes) continue;
    std::set<unsigned> pids;  // NVML may list a pid twice (MIG instances)
    for (const GpuProcess& p : g->processes) pids.insert(p.pid);
    w.sample({{"gpu", std::to_string(i)}}, static_cast<double>(pids.size()));
  }
  w.family("gpumon_gpu_process_memory_bytes",
           "Device memory used by a compute process, bytes; process = executable base name",
           kGauge);
  for (unsigned i = 0; i < v.gpus.size(); ++i) {
    const GpuState* g = v.gpu(i);
    if (g == nullptr || !g->has_processes) continue;
    // NVML may list a pid twice (MIG instances): one series per pid, memory summed.
    struct ByPid {
      std::string name;
      const job::JobIdentity* job;
      double bytes = 0;
    };
    std::map<unsigned, ByPid> by_pid;
    for (const GpuProcess& p : g->processes) {
      if (!p.used_memory_bytes) continue;
      auto [it, added] = by_pid.try_emplace(p.pid, ByPid{process_display_name(p), &p.job});
      it->second.bytes += static_cast<double>(p.used_memory_bytes.value());
    }
    const std::string gpu = std::to_string(i);
    for (const auto& [pid, entry] : by_pid) {
      const std::string p = std::to_string(pid);
      std::vector<Label> labels{{"gpu", gpu}, {"pid", p}, {"process", entry.name}};
      append_job_labels(*entry.job, labels);
      w.sample(labels, entry.bytes);
    }
  }
}

}  // namespace

void render_native_gpus(const ExporterView& v, const ExporterOptions& o, ExpositionWriter& w) {
  render_info(v, o, w);
  for (const FamilySpec& f : native_families()) {
    w.family(f.name, f.help, f.type);
    for (unsigned i = 0; i < v.gpus.size(); ++i) {
      const GpuState* g = v.gpu(i);
      if (g == nullptr) continue;
      const std::optional<double> value = g->known.value(f.id);
      if (value) w.sample({{"gpu", std::to_string(i)}}, scaled(f, *value));
    }
  }
  w.family("gpumon_gpu_sm_clock_max_hertz", "Maximum SM clock, hertz (from DeviceStatic)", kGauge);
  for (const DeviceStatic& d : v.devices) {
    if (d.max_sm_clock_mhz) {
      w.sample({{"gpu", std::to_string(d.index)}}, d.max_sm_clock_mhz.value() * 1e6);
    }
  }
  render_stale(v, w);
  render_clock_events(v, w);
  render_clock_event_time(v, w);
  render_events(v, w);
  render_processes(v, w);
  render_gpu_jobs(v, w);
}

std::string render_metrics(const ExporterView& view, const ExporterOptions& options) {
  std::string out;
  out.reserve(4096 + view.devices.size() * 6144 * (options.dcgm_compat ? 2 : 1));
  ExpositionWriter w(out);
  render_self(view, options, w);
  render_native_gpus(view, options, w);
  render_training(view, w);
  if (options.dcgm_compat) render_dcgm(view, options, w);
  return out;
}

}  // namespace gpumon::exporter
