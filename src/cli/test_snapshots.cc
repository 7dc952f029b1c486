// SPDX-License-Identifier: MIT
#include "cli/test_snapshots.h"

#include "gpu/metric_catalog.h"

namespace gpumon::cli::testing {

using std::chrono::milliseconds;
using std::chrono::system_clock;

constexpr std::uint64_t kGiB = 1ULL << 30;

SystemInfo test_system() {
  SystemInfo s;
  s.driver_version = std::string("580.159.04");
  s.nvml_version = std::string("12.580.159.04");
  s.cuda_driver_version = 13000;
  return s;
}

Snapshot empty_snapshot() {
  Snapshot snap;
  snap.system = test_system();
  snap.hostname = "node01";
  snap.taken_at =
      system_clock::time_point(milliseconds(1796237212153LL));  // 2026-12-02 18:46:52 UTC
  return snap;
}

GpuSnapshot healthy_gpu(unsigned index) {
  GpuSnapshot g;
  g.info.index = index;
  g.info.name = std::string("NVIDIA H200");
  g.info.uuid = std::string("GPU-5ca1ab1e-0000-4000-8000-00000000000") + std::to_string(index);
  g.info.serial = std::string("165000000000") + std::to_string(index);
  g.info.pci_bus_id = std::string("00000000:18:00.0");
  g.info.memory_total_bytes = 140 * kGiB;
  g.info.max_sm_clock_mhz = 1980U;
  g.info.max_mem_clock_mhz = 3201U;
  DeviceSample& s = g.sample;
  s.index = index;
  s.utilization_gpu_pct = 98U;
  s.utilization_memory_pct = 45U;
  s.memory_total_bytes = 140 * kGiB;
  s.memory_used_bytes = 70 * kGiB;
  s.memory_free_bytes = 70 * kGiB;
  s.memory_reserved_bytes = 616ULL << 20;
  s.temperature_gpu_c = 62U;
  s.temperature_memory_c = 70U;
  s.power_draw_w = 612.4;
  s.power_limit_w = 700.0;
  s.sm_clock_mhz = 1980U;
  s.mem_clock_mhz = 3201U;
  s.pstate = 0U;
  s.clock_event_reasons = std::uint64_t{0};
  s.ecc_corrected_volatile = std::uint64_t{0};
  s.ecc_uncorrected_volatile = std::uint64_t{0};
  g.process_count = std::size_t{1};
  return g;
}

GpuSnapshot gpu_with_missing_fields(unsigned index) {
  GpuSnapshot g = healthy_gpu(index);
  DeviceSample& s = g.sample;
  s.utilization_gpu_pct = Reading<unsigned>::missing(Missing::kNotAvailable);
  s.utilization_memory_pct = Reading<unsigned>::missing(Missing::kError);
  s.memory_used_bytes = Reading<std::uint64_t>::missing(Missing::kNoPermission);
  s.temperature_memory_c = Reading<unsigned>::missing(Missing::kNotSupported);
  s.power_draw_w = Reading<double>::missing(Missing::kNotSupported);
  s.power_limit_w = Reading<double>::missing(Missing::kNotSupported);
  s.sm_clock_mhz = Reading<unsigned>::missing(Missing::kNotAvailable);
  s.pstate = Reading<unsigned>::missing(Missing::kNotAvailable);
  s.clock_event_reasons = Reading<std::uint64_t>::missing(Missing::kNotSupported);
  s.ecc_corrected_volatile = Reading<std::uint64_t>::missing(Missing::kNotSupported);
  s.ecc_uncorrected_volatile = Reading<std::uint64_t>::missing(Missing::kNotSupported);
  g.process_count = Reading<std::size_t>::missing(Missing::kNotSupported);
  return g;
}

GpuSnapshot lost_gpu(unsigned index) {
  GpuSnapshot g = healthy_gpu(index);
  DeviceSample lost;
  lost.index = index;
  mark_lost(lost);  // as NvmlBackend returns it
  g.sample = lost;
  g.process_count = Reading<std::size_t>::missing(Missing::kGpuLost);
  return g;
}

GpuSnapshot unopened_gpu(unsigned index) {
  GpuSnapshot g;
  g.info.index = index;
  g.info.name = Reading<std::string>::missing(Missing::kNoPermission);
  g.info.open_error = "Insufficient Permissions";
  g.sample.index = index;
  set_all_missing(g.sample, Missing::kNoPermission);  // as NvmlBackend returns it
  g.process_count = Reading<std::size_t>::missing(Missing::kNoPermission);
  return g;
}

ProcessRow visible_process(unsigned gpu, unsigned pid) {
  ProcessRow p;
  p.gpu.pid = pid;
  p.gpu.gpu_index = gpu;
  p.gpu.used_memory_bytes = 70 * kGiB;
  p.gpu.name = std::string("python");
  p.host.pid = pid;
  p.host.visibility = host::Visibility::kVisible;
  p.host.uid = 1000U;
  p.host.user = std::string("alice");
  p.host.comm = std::string("python");
  p.host.command_line = std::string("python train.py --config configs/llama-8b.yaml --lr 3e-4");
  p.host.cpu_percent = 98.5;
  p.host.cpu_window = host::CpuWindow::kInterval;
  p.host.rss_bytes = 12 * kGiB + 300 * (1ULL << 20);
  p.host.start_time = system_clock::time_point(milliseconds(1796230000000LL));
  p.host.start_ticks = 100000;
  return p;
}

ProcessRow invisible_process(unsigned gpu, unsigned pid) {
  ProcessRow p;
  p.gpu.pid = pid;
  p.gpu.gpu_index = gpu;
  p.gpu.used_memory_bytes = 14ULL << 20;
  p.gpu.name = std::string("python3");
  p.host.pid = pid;
  p.host.visibility = host::Visibility::kNotVisible;
  const auto why = Missing::kNotAvailable;
  p.host.uid = Reading<unsigned>::missing(why);
  p.host.user = p.host.comm = p.host.command_line = Reading<std::string>::missing(why);
  p.host.cpu_percent = Reading<double>::missing(why);
  p.host.rss_bytes = Reading<std::uint64_t>::missing(why);
  p.host.start_time = Reading<system_clock::time_point>::missing(why);
  return p;
}

}  // namespace gpumon::cli::testing
