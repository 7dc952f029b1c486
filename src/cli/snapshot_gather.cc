// SPDX-License-Identifier: MIT
#include "cli/snapshot_gather.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>

#include "host/text_clean.h"

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
  std::array<char, 256> buf{};
  if (::gethostname(buf.data(), buf.size() - 1) != 0) return "";
  return host::clean_text(std::string(buf.data(), strnlen(buf.data(), buf.size())));
}

Snapshot gather_snapshot(GpuBackend& backend, host::ProcessInspector& inspector,
                         const std::string& hostname, std::chrono::steady_clock::time_point now,
                         std::chrono::system_clock::time_point taken_at) {
  Snapshot snap;
  snap.system = backend.system();
  clean(snap.system.driver_version);
  clean(snap.system.nvml_version);
  snap.system.simulated_scenario = host::clean_text(snap.system.simulated_scenario);
  snap.hostname = hostname;
  snap.taken_at = taken_at;

  const MetricSet what = snapshot_metrics();
  std::vector<GpuProcess> gpu_processes;
  for (unsigned i = 0; i < backend.device_count(); ++i) {
    GpuSnapshot g;
    g.sample = backend.sample(i, what);  // first: it loads the static details we show
    g.info = backend.device(i);
    clean(g.info.name);
    clean(g.info.uuid);
    clean(g.info.serial);
    clean(g.info.pci_bus_id);
    if (g.info.open_error) g.info.open_error = host::clean_text(*g.info.open_error);
    Reading<std::vector<GpuProcess>> procs = backend.processes(i);
    if (procs) {
      g.process_count = procs.value().size();
      for (GpuProcess p : procs.value()) {
        p.gpu_index = i;
        clean(p.name);
        gpu_processes.push_back(std::move(p));
      }
    } else {
      g.process_count = Reading<std::size_t>::missing(procs.why());
    }
    snap.gpus.push_back(std::move(g));
  }

  std::sort(gpu_processes.begin(), gpu_processes.end(),
            [](const GpuProcess& a, const GpuProcess& b) {
              return a.gpu_index != b.gpu_index ? a.gpu_index < b.gpu_index : a.pid < b.pid;
            });
  std::vector<unsigned> pids;
  pids.reserve(gpu_processes.size());
  for (const GpuProcess& p : gpu_processes) pids.push_back(p.pid);
  std::vector<host::HostProcessInfo> hosts = inspector.inspect(pids, now);
  for (std::size_t k = 0; k < gpu_processes.size(); ++k) {
    ProcessRow row{std::move(gpu_processes[k]), std::move(hosts[k])};
    row.gpu.user = row.host.user;
    row.gpu.command_line = row.host.command_line;
    row.gpu.cpu_percent = row.host.cpu_percent;
    row.gpu.host_memory_rss_bytes = row.host.rss_bytes;
    snap.processes.push_back(std::move(row));
  }
  return snap;
}

}  // namespace gpumon::cli
