// SPDX-License-Identifier: MIT
#include "cli/snapshot_json.h"

#include "cli/format_units.h"
#include "cli/gpu_cells.h"
#include "training/job_json.h"

namespace gpumon::cli {
namespace {

using nlohmann::json;

// Puts readings into `obj`: the value, or null plus the reason under "unavailable" (written
// by finish()).
class Writer {
 public:
  explicit Writer(json& obj) : obj_(obj) {}

  void finish() {
    if (!unavailable_.empty()) obj_["unavailable"] = std::move(unavailable_);
  }

  template <typename T, typename Fn>
  void put(const char* key, const Reading<T>& r, Fn convert) {
    if (r) {
      obj_[key] = convert(r.value());
    } else {
      obj_[key] = nullptr;
      unavailable_[key] = std::string(to_string(r.why()));
    }
  }
  template <typename T>
  void put(const char* key, const Reading<T>& r) {
    put(key, r, [](const T& v) { return v; });
  }

 private:
  json& obj_;
  json unavailable_ = json::object();
};

// Milliseconds divided once, so 1796237212153 ms prints as 1796237212.153.
double unix_seconds(std::chrono::system_clock::time_point t) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch());
  return static_cast<double>(ms.count()) / 1000.0;
}

json gpu_json(const GpuSnapshot& g, const JsonOptions& options) {
  const DeviceStatic& d = g.info;
  const DeviceSample& s = g.sample;
  json o = json::object();
  o["index"] = d.index;
  o["lost"] = s.lost;
  Writer w(o);
  w.put("name", d.name);
  if (options.show_uuid) w.put("uuid", d.uuid);
  if (options.show_serial) w.put("serial", d.serial);
  w.put("pci_bus_id", d.pci_bus_id);
  w.put("utilization_gpu_percent", s.utilization_gpu_pct);
  w.put("utilization_memory_percent", s.utilization_memory_pct);
  w.put("memory_total_bytes", memory_total(s, d));
  w.put("memory_used_bytes", s.memory_used_bytes);
  w.put("memory_free_bytes", s.memory_free_bytes);
  w.put("memory_reserved_bytes", s.memory_reserved_bytes);
  w.put("temperature_gpu_c", s.temperature_gpu_c);
  w.put("temperature_memory_c", s.temperature_memory_c);
  w.put("power_draw_w", s.power_draw_w);
  w.put("power_limit_w", s.power_limit_w);
  const auto hz = [](unsigned mhz) { return static_cast<std::uint64_t>(mhz) * 1000000U; };
  w.put("sm_clock_hz", s.sm_clock_mhz, hz);
  w.put("sm_clock_max_hz", d.max_sm_clock_mhz, hz);
  w.put("memory_clock_hz", s.mem_clock_mhz, hz);
  w.put("memory_clock_max_hz", d.max_mem_clock_mhz, hz);
  w.put("pstate", s.pstate);
  w.put("clock_event_reasons_mask", s.clock_event_reasons);
  w.put("clock_event_reasons", s.clock_event_reasons,
        [](std::uint64_t mask) { return clock_event_reason_names(mask); });
  w.put("ecc_errors_corrected_volatile", s.ecc_corrected_volatile);
  w.put("ecc_errors_uncorrected_volatile", s.ecc_uncorrected_volatile);
  w.put("process_count", g.process_count);
  w.finish();
  return o;
}

json process_json(const ProcessRow& p) {
  json o = json::object();
  o["gpu_index"] = p.gpu.gpu_index;
  o["pid"] = p.gpu.pid;
  o["host_visibility"] = std::string(host::to_string(p.host.visibility));
  o["cpu_percent_window"] = std::string(host::to_string(p.host.cpu_window));
  Writer w(o);
  w.put("used_gpu_memory_bytes", p.gpu.used_memory_bytes);
  w.put("gpu_instance_id", p.gpu.gpu_instance_id);
  w.put("compute_instance_id", p.gpu.compute_instance_id);
  w.put("nvml_process_name", p.gpu.name);
  w.put("user", p.host.user);
  w.put("uid", p.host.uid);
  w.put("comm", p.host.comm);
  w.put("command_line", p.host.command_line);
  w.put("cpu_percent", p.host.cpu_percent);
  w.put("host_memory_rss_bytes", p.host.rss_bytes);
  w.put("start_time", p.host.start_time, utc_time_text);
  w.put("start_time_unix_s", p.host.start_time, unix_seconds);
  w.finish();
  o["job"] = training::job_json(p.host.job);
  return o;
}

}  // namespace

json snapshot_to_json(const Snapshot& snap, const JsonOptions& options) {
  json o = json::object();
  o["gpumon_version"] = options.version;
  // The scenario's name, null on real GPUs: the key every gpumon JSON uses.
  o["simulated"] =
      snap.system.simulated_scenario.empty() ? json(nullptr) : json(snap.system.simulated_scenario);
  o["host"] = snap.hostname;
  o["timestamp"] = utc_time_text(snap.taken_at);
  o["timestamp_unix_s"] = unix_seconds(snap.taken_at);
  Writer w(o);
  w.put("driver_version", snap.system.driver_version);
  w.put("nvml_version", snap.system.nvml_version);
  w.put("cuda_driver_version", snap.system.cuda_driver_version);
  w.finish();
  json gpus = json::array();
  for (const GpuSnapshot& g : snap.gpus) gpus.push_back(gpu_json(g, options));
  o["gpus"] = std::move(gpus);
  json procs = json::array();
  for (const ProcessRow& p : snap.processes) procs.push_back(process_json(p));
  o["processes"] = std::move(procs);
  json ranks = json::array();
  for (const RankRow& r : snap.ranks)
    ranks.push_back(
        {{"gpu", r.gpu ? json(*r.gpu) : json()},
         {"rank", r.rank ? json(*r.rank) : json()},
         {"pid", r.pid},
         {"step", r.step},
         {"torch_allocated_bytes", r.allocated_bytes ? json(*r.allocated_bytes) : json()},
         {"torch_reserved_bytes", r.reserved_bytes ? json(*r.reserved_bytes) : json()},
         {"step_s", r.step_s ? json(*r.step_s) : json()},
         {"data_wait_s", r.data_wait_s ? json(*r.data_wait_s) : json()},
         {"age_s", r.age_s}});
  o["ranks"] = std::move(ranks);
  json findings = json::array();
  for (const SnapshotFinding& f : snap.findings)
    findings.push_back(
        {{"id", f.id}, {"severity", f.severity}, {"gpus", f.gpus}, {"summary", f.summary}});
  o["findings"] = std::move(findings);
  return o;
}

std::string format_snapshot_json(const Snapshot& snap, const JsonOptions& options) {
  return snapshot_to_json(snap, options).dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace gpumon::cli
