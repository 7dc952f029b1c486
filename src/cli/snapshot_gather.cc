// SPDX-License-Identifier: MIT
#include "cli/snapshot_gather.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>

#include "host/text_clean.h"
#include "util/host_name.h"

namespace gpumon::cli {
namespace {

void clean(Reading<std::string>& r) {
  if (r) r = host::clean_text(r.value());
}

}  // namespace

MetricSet snapshot_metrics() {
  return MetricSet(MetricGroup::kUtilization) | MetricGroup::kMemory | MetricGroup::kTemperature |
         MetricGroup::kMemoryTemperature | MetricGroup::kPower | MetricGroup::kPowerLimit |
         MetricGroup::kSmClock | MetricGroup::kMemClock | MetricGroup::kPstate |
         MetricGroup::kClockEvents | MetricGroup::kEcc | MetricGroup::kStaticDetails;
}

std::string host_name() {
  return host::clean_text(util::host_name());
}

void set_system(Snapshot& snap, const SystemInfo& system, const std::string& hostname) {
  snap.system = system;
  clean(snap.system.driver_version);
  clean(snap.system.nvml_version);
  snap.system.simulated_scenario = host::clean_text(snap.system.simulated_scenario);
  snap.hostname = hostname;
}

void add_gpu(Snapshot& snap, DeviceStatic info, DeviceSample sample,
             Reading<std::size_t> process_count) {
  GpuSnapshot g;
  g.sample = std::move(sample);
  g.info = std::move(info);
  clean(g.info.name);
  clean(g.info.uuid);
  clean(g.info.serial);
  clean(g.info.pci_bus_id);
  if (g.info.open_error) g.info.open_error = host::clean_text(*g.info.open_error);
  g.process_count = std::move(process_count);
  snap.gpus.push_back(std::move(g));
}

void set_processes(Snapshot& snap, std::vector<GpuProcess> processes,
                   host::ProcessInspector& inspector, std::chrono::steady_clock::time_point now) {
  for (GpuProcess& p : processes) clean(p.name);
  std::sort(processes.begin(), processes.end(), [](const GpuProcess& a, const GpuProcess& b) {
    return a.gpu_index != b.gpu_index ? a.gpu_index < b.gpu_index : a.pid < b.pid;
  });
  std::vector<unsigned> pids;
  pids.reserve(processes.size());
  for (const GpuProcess& p : processes) pids.push_back(p.pid);
  std::vector<host::HostProcessInfo> hosts = inspector.inspect(pids, now);
  snap.processes.clear();
  for (std::size_t k = 0; k < processes.size(); ++k) {
    ProcessRow row{std::move(processes[k]), std::move(hosts[k])};
    row.gpu.user = row.host.user;
    row.gpu.command_line = row.host.command_line;
    row.gpu.cpu_percent = row.host.cpu_percent;
    row.gpu.host_memory_rss_bytes = row.host.rss_bytes;
    snap.processes.push_back(std::move(row));
  }
}

Snapshot gather_snapshot(GpuBackend& backend, host::ProcessInspector& inspector,
                         const std::string& hostname, std::chrono::steady_clock::time_point now,
                         std::chrono::system_clock::time_point taken_at) {
  Snapshot snap;
  set_system(snap, backend.system(), hostname);
  snap.taken_at = taken_at;
  const MetricSet what = snapshot_metrics();
  std::vector<GpuProcess> gpu_processes;
  for (unsigned i = 0; i < backend.device_count(); ++i) {
    DeviceSample sample = backend.sample(i, what);  // first: it loads the static details we show
    Reading<std::vector<GpuProcess>> procs = backend.processes(i);
    Reading<std::size_t> count = Reading<std::size_t>::missing(procs.why());
    if (procs) {
      count = procs.value().size();
      for (GpuProcess p : procs.value()) {
        p.gpu_index = i;
        gpu_processes.push_back(std::move(p));
      }
    }
    add_gpu(snap, backend.device(i), std::move(sample), std::move(count));
  }
  set_processes(snap, std::move(gpu_processes), inspector, now);
  return snap;
}

}  // namespace gpumon::cli
