// SPDX-License-Identifier: MIT
// The JSON API (docs/exporter.md): missing values are null, never 0; text from outside
// (process and user names) is cleaned to valid UTF-8 first; serials never appear.
#include <chrono>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "exporter/history_columns.h"
#include "exporter/json_values.h"
#include "exporter/renderers.h"
#include "host/text_clean.h"
#include "training/job_json.h"

namespace gpumon::exporter {
namespace {

using nlohmann::json;

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

json process_json(const GpuProcess& p) {
  json o = json::object();
  o["pid"] = p.pid;
  o["name"] = p.name ? json(process_display_name(p)) : json(nullptr);
  o["user"] = text_or_null(p.user);
  o["used_memory_bytes"] = or_null(p.used_memory_bytes);
  o["cpu_percent"] = or_null(p.cpu_percent);
  o["host_memory_rss_bytes"] = or_null(p.host_memory_rss_bytes);
  o["sm_util_pct"] = or_null(p.sm_util_pct);
  o["mem_util_pct"] = or_null(p.mem_util_pct);
  o["job"] = training::job_json(p.job);
  return o;
}

// 1 when the sample was throttled (gpu/throttle.h, the report's and the diagnosis' rule), 0 when
// not, null without clock event reasons.
json throttled_json(const std::optional<double>& reasons, const std::optional<double>& sm_clock,
                    const std::optional<double>& max_sm_clock) {
  const std::int8_t flag = throttled_flag(reasons, sm_clock, max_sm_clock);
  return flag < 0 ? json(nullptr) : json(flag);
}

std::optional<double> max_sm_clock_of(const DeviceStatic* d) {
  if (d == nullptr || !d->max_sm_clock_mhz) return std::nullopt;
  return static_cast<double>(*d->max_sm_clock_mhz);
}

json gpu_current(const ExporterView& v, unsigned index) {
  const GpuState* g = v.gpu(index);
  const DeviceStatic* d = find_device(v, index);
  json o = json::object();
  o["gpu"] = index;
  o["name"] = d != nullptr ? text_or_null(d->name) : json(nullptr);
  o["lost"] = g != nullptr && g->lost;
  if (g != nullptr && g->stale_call) {
    o["stale"] = {{"call", *g->stale_call}, {"for_s", g->stale_for_s}};
  } else {
    o["stale"] = nullptr;
  }
  json metrics = json::object();
  for (const MetricInfo& m : metric_catalog()) {
    metrics[std::string(m.name)] = g != nullptr ? or_null(g->known.value(m.id)) : json();
  }
  const std::optional<double> reasons =
      g != nullptr ? g->known.value(MetricId::kClockEventReasons) : std::nullopt;
  metrics[std::string(kThrottledColumn)] =
      g != nullptr
          ? throttled_json(reasons, g->known.value(MetricId::kSmClockMhz), max_sm_clock_of(d))
          : json();
  o["metrics"] = std::move(metrics);
  if (reasons) {
    o["clock_event_reasons"] = clock_event_reason_names(static_cast<std::uint64_t>(*reasons));
  } else {
    o["clock_event_reasons"] = nullptr;
  }
  if (g != nullptr && g->has_processes) {
    json list = json::array();
    for (const GpuProcess& p : g->processes) list.push_back(process_json(p));
    o["processes"] = std::move(list);
  } else {
    o["processes"] = nullptr;
  }
  json xids = json::object();
  if (g != nullptr) {
    for (const auto& [xid, n] : g->xid_counts) xids[std::to_string(xid)] = n;
  }
  o["xid_counts"] = std::move(xids);
  o["last_xid"] = g != nullptr && g->last_xid ? json(*g->last_xid) : json(nullptr);
  o["last_xid_time"] =
      g != nullptr && g->last_xid ? json(unix_seconds(g->last_xid_time)) : json(nullptr);
  return o;
}

// Every GPU the sampler knows, plus any that only appeared in ticks or events.
unsigned gpu_count(const ExporterView& v) {
  auto n = static_cast<unsigned>(v.gpus.size());
  for (const DeviceStatic& d : v.devices) n = std::max(n, d.index + 1);
  return n;
}

json simulated(const ExporterView& v) {
  return v.system.simulated_scenario.empty() ? json(nullptr)
                                             : json(host::clean_text(v.system.simulated_scenario));
}

}  // namespace

std::string cuda_version(int driver_version) {
  return std::to_string(driver_version / 1000) + "." + std::to_string(driver_version % 1000 / 10);
}

double unix_seconds(WallClock::time_point t) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch());
  return static_cast<double>(ms.count()) / 1000.0;
}

std::string process_display_name(const GpuProcess& p) {
  if (!p.name) return {};
  const std::string& path = p.name.value();
  const auto slash = path.find_last_of('/');
  // "/usr/bin/python3" -> "python3"; a name ending in '/' keeps its whole text.
  const std::string base =
      slash == std::string::npos || slash + 1 == path.size() ? path : path.substr(slash + 1);
  return host::clean_text(base);
}

std::string render_current_json(const ExporterView& v, const ExporterOptions& /*options*/) {
  json o = json::object();
  o["time"] = unix_seconds(v.now_wall);
  o["simulated"] = simulated(v);
  o["interval_s"] = std::chrono::duration<double>(v.config.interval).count();
  o["up"] = v.up;
  o["sampler"] = {
      {"ticks", v.stats.ticks},
      {"overruns", v.stats.overruns},
      {"nvml_errors", v.stats.nvml_errors},
      {"last_tick_age_s", v.have_tick ? json(v.last_tick_age_s) : json(nullptr)},
      {"last_tick_time", v.have_tick ? json(unix_seconds(v.last_tick_wall)) : json(nullptr)}};
  json gpus = json::array();
  for (unsigned i = 0; i < gpu_count(v); ++i) gpus.push_back(gpu_current(v, i));
  o["gpus"] = std::move(gpus);
  return dump_json(o);
}

std::string render_devices_json(const ExporterView& v, const ExporterOptions& options) {
  json o = json::object();
  o["system"] = {{"hostname", host::clean_text(options.hostname)},
                 {"driver_version", text_or_null(v.system.driver_version)},
                 {"nvml_version", text_or_null(v.system.nvml_version)},
                 {"cuda_driver_version", or_null(v.system.cuda_driver_version)},
                 {"cuda_version", v.system.cuda_driver_version
                                      ? json(cuda_version(v.system.cuda_driver_version.value()))
                                      : json(nullptr)},
                 {"simulated", simulated(v)}};
  o["version"] = options.version;
  o["interval_s"] = std::chrono::duration<double>(v.config.interval).count();
  o["history_capacity"] = v.history_capacity;
  json gpus = json::array();
  for (const DeviceStatic& d : v.devices) {
    json g = json::object();
    g["gpu"] = d.index;
    g["name"] = text_or_null(d.name);
    if (options.show_uuid) g["uuid"] = text_or_null(d.uuid);
    g["pci_bus_id"] = text_or_null(d.pci_bus_id);
    g["minor_number"] = or_null(d.minor_number);
    g["memory_total_bytes"] = or_null(d.memory_total_bytes);
    g["max_sm_clock_mhz"] = or_null(d.max_sm_clock_mhz);
    g["max_mem_clock_mhz"] = or_null(d.max_mem_clock_mhz);
    g["max_graphics_clock_mhz"] = or_null(d.max_graphics_clock_mhz);
    g["persistence_mode"] = or_null(d.persistence_mode);
    g["ecc_enabled"] = or_null(d.ecc_enabled);
    g["vbios_version"] = text_or_null(d.vbios_version);
    g["compute_mode"] = or_null(d.compute_mode);
    g["mig_mode_current"] = or_null(d.mig_mode_current);
    g["mig_mode_pending"] = or_null(d.mig_mode_pending);
    g["pcie_link_gen_max"] = or_null(d.pcie_link_gen_max);
    g["pcie_link_gen_gpu_max"] = or_null(d.pcie_link_gen_gpu_max);
    g["pcie_link_width_max"] = or_null(d.pcie_link_width_max);
    g["inforom_image_version"] = text_or_null(d.inforom_image_version);
    g["display_active"] = or_null(d.display_active);
    g["accounting_mode"] = or_null(d.accounting_mode);
    gpus.push_back(std::move(g));
  }
  o["gpus"] = std::move(gpus);
  return dump_json(o);
}

std::string render_history_json(const std::vector<TickSample>& ticks, double interval_s,
                                const std::vector<MetricId>& metrics, std::size_t stride,
                                const std::vector<DeviceStatic>* throttled_devices) {
  HistoryColumns<double> c;
  c.interval_s = interval_s;
  c.stride = stride == 0 ? 1 : stride;
  c.metrics = metrics;
  c.throttled = throttled_devices != nullptr;
  std::vector<std::optional<double>> max_sm_clock;  // per GPU, for `throttled`
  std::vector<int> slot;  // NVML index -> position in c.gpus, -1 = none yet
  for (std::size_t t = 0; t < ticks.size(); t += c.stride) {
    for (const DeviceSample& s : ticks[t].gpus) {
      if (s.index >= slot.size()) slot.resize(s.index + 1, -1);
      if (slot[s.index] < 0) {  // GPUs in the order they first appear
        slot[s.index] = static_cast<int>(c.gpus.size());
        c.gpus.push_back({s.index, {}, std::vector<std::vector<double>>(metrics.size()), {}});
        max_sm_clock.emplace_back();
        if (throttled_devices != nullptr)  // the max SM clock once per GPU, not per sample
          for (const DeviceStatic& d : *throttled_devices)
            if (d.index == s.index) max_sm_clock.back() = max_sm_clock_of(&d);
      }
      const auto g = static_cast<std::size_t>(slot[s.index]);
      HistoryGpuColumns<double>& col = c.gpus[g];
      col.time.push_back(unix_seconds(ticks[t].wall_time));
      for (std::size_t m = 0; m < metrics.size(); ++m)
        col.values[m].push_back(metric_value(s, metrics[m]).value_or(kNan));
      if (c.throttled) {
        col.throttled.push_back(throttled_flag(metric_value(s, MetricId::kClockEventReasons),
                                               metric_value(s, MetricId::kSmClockMhz),
                                               max_sm_clock[g]));
      }
    }
  }
  return write_history_json(c);
}

}  // namespace gpumon::exporter
