// SPDX-License-Identifier: MIT
#include "query/test_backend.h"

#include <cstdio>
#include <ctime>
#include <sstream>

#include "gpu/metric_catalog.h"

namespace gpumon::query::testing {
namespace {

constexpr std::uint64_t kMiB = 1ULL << 20;

// Copies the groups in `what` from `full` into a fresh sample.
DeviceSample only(const DeviceSample& full, MetricSet what) {
  DeviceSample s;
  s.index = full.index;
  s.wall_time = full.wall_time;
  s.mono_time = full.mono_time;
  merge_groups(s, full, what);
  return s;
}

// What NvmlBackend returns for a lost GPU.
DeviceSample lost_sample(const DeviceSample& full) {
  DeviceSample s;
  s.index = full.index;
  s.wall_time = full.wall_time;
  s.mono_time = full.mono_time;
  mark_lost(s);
  return s;
}

// Lets run_query share a TestBackend with the test that made it.
class Forwarding final : public GpuBackend {
 public:
  explicit Forwarding(std::shared_ptr<TestBackend> b) : b_(std::move(b)) {}
  const SystemInfo& system() const override { return b_->system(); }
  unsigned device_count() const override { return b_->device_count(); }
  const DeviceStatic& device(unsigned i) const override { return b_->device(i); }
  DeviceSample sample(unsigned i, MetricSet what) override { return b_->sample(i, what); }
  Reading<std::vector<GpuProcess>> processes(unsigned i) override { return b_->processes(i); }
  ReportDetails report_details(unsigned i) override { return b_->report_details(i); }

 private:
  std::shared_ptr<TestBackend> b_;
};

}  // namespace

DeviceSample TestBackend::sample(unsigned index, MetricSet what) {
  requests.push_back(what);
  if (on_sample) on_sample(index);
  const DeviceSample& full = samples.at(index);
  return lost.at(index) ? lost_sample(full) : only(full, what);
}

ReportDetails TestBackend::report_details(unsigned index) {
  return lost.at(index) ? report_details_missing(Missing::kGpuLost) : details;
}

Reading<std::vector<GpuProcess>> TestBackend::processes(unsigned index) {
  if (lost.at(index)) return Reading<std::vector<GpuProcess>>::missing(Missing::kGpuLost);
  return process_lists.at(index);
}

unsigned TestBackend::add(const DeviceStatic& info, const DeviceSample& state) {
  const auto index = static_cast<unsigned>(statics.size());
  statics.push_back(info);
  statics.back().index = index;
  samples.push_back(state);
  samples.back().index = index;
  process_lists.emplace_back(std::vector<GpuProcess>{});
  lost.push_back(false);
  return index;
}

std::chrono::system_clock::time_point local_time(const std::string& text) {
  std::tm tm{};
  int millis = 0;
  std::sscanf(text.c_str(), "%d/%d/%d %d:%d:%d.%d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
              &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &millis);
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  tm.tm_isdst = -1;
  return std::chrono::system_clock::from_time_t(std::mktime(&tm)) +
         std::chrono::milliseconds(millis);
}

SystemInfo h200_system() {
  SystemInfo s;
  s.driver_version = std::string("580.159.04");
  s.nvml_version = std::string("12.580.159.04");
  s.cuda_driver_version = 13000;
  return s;
}

DeviceStatic h200_static() {
  DeviceStatic d;
  d.name = std::string("NVIDIA H200");
  d.uuid = std::string("GPU-5ca1ab1e-0000-4000-8000-000000000000");
  d.serial = std::string("1650000000000");
  d.pci_bus_id = std::string("00000000:00:06.0");
  d.pci_device_id = 0x233510DEU;
  d.minor_number = 0U;
  d.memory_total_bytes = 143771 * kMiB;  // 150754820096 bytes, as the driver reports
  d.max_sm_clock_mhz = 1980U;
  d.max_mem_clock_mhz = 3201U;
  d.max_graphics_clock_mhz = 1980U;
  d.persistence_mode = true;
  d.ecc_enabled = true;
  d.ecc_pending = true;
  d.vbios_version = std::string("96.00.A5.00.1A");
  d.compute_mode = 0U;
  d.mig_mode_current = false;
  d.mig_mode_pending = false;
  d.pcie_link_gen_max = 5U;
  d.pcie_link_gen_gpu_max = 5U;
  d.pcie_link_width_max = 16U;
  d.inforom_image_version = std::string("G520.0282.02.02");
  // The board as that H200 answered (driver 580, a VM with the GPU passed through).
  d.pci_subsystem_id = 0x18BF10DEU;
  d.brand = 14U, d.architecture = 9U, d.board_id = 6U, d.module_id = 3U;
  d.multi_gpu_board = false;
  d.board_part_number = std::string("692-2G520-0282-000");
  d.gsp_firmware_version = std::string("580.159.04");
  d.virtualization_mode = 1U, d.addressing_mode = 0U;
  d.pci_base_class = 3U, d.pci_sub_class = 2U;
  d.accounting_buffer_size = 4000U;
  d.inforom_oem_version = std::string("2.1"), d.inforom_ecc_version = std::string("7.16");
  d.inforom_power_version = Reading<std::string>::missing(Missing::kNotSupported);
  d.display_mode = true;  // nvmlDeviceGetDisplayMode on the H200 (driver 580): Enabled
  d.display_active = false;
  d.accounting_mode = false;
  d.power_default_limit_w = 700.0, d.power_min_limit_w = 200.0, d.power_max_limit_w = 700.0;
  d.applications_graphics_clock_mhz = 1980U, d.applications_mem_clock_mhz = 3201U;
  d.default_applications_graphics_clock_mhz = 1980U, d.default_applications_mem_clock_mhz = 3201U;
  // The H200's T.Limit thresholds (driver 580, field values 193-196).
  d.tlimit_shutdown_c = -8, d.tlimit_slowdown_c = -2, d.tlimit_mem_max_c = 0,
  d.tlimit_gpu_max_c = 0;
  return d;
}

ReportDetails h200_report_details() {
  ReportDetails r;
  r.video_clock_mhz = 765U;
  r.max_video_clock_mhz = 1545U;
  r.customer_boost_max_graphics_mhz = 1980U;
  r.encoder = r.fbc = {0U, 0U, 0U};
  r.pcie_replay_rollovers = 0U;
  r.c2c_enabled = false;
  r.recovery_action = 0U;
  r.ecc_volatile = r.ecc_aggregate = {std::uint64_t{0}, std::uint64_t{0}, std::uint64_t{0},
                                      std::uint64_t{0}, std::uint64_t{0}};
  r.sram_threshold_exceeded = false;
  r.sram_sources = SramErrorSources{};
  r.channel_repair_pending = r.tpc_repair_pending = r.unrepairable_memory = false;
  r.remapped_rows_correctable_inactive = r.remapped_rows_uncorrectable_inactive = 0U;
  r.remap_histogram = RemapHistogram{3072, 0, 0, 0, 0};
  r.memory_power_average_w = 39.24;
  r.memory_power_instant_w = Reading<double>::missing(Missing::kNotSupported);
  r.protected_memory_total_bytes = r.protected_memory_used_bytes = r.protected_memory_free_bytes =
      std::uint64_t{0};
  r.egm_enabled = false;
  return r;
}

DeviceSample h200_idle_sample() {
  DeviceSample s;
  s.wall_time = local_time("2026/11/29 18:46:42.317");
  s.utilization_gpu_pct = 0U;
  s.utilization_memory_pct = 0U;
  s.memory_total_bytes = 143771 * kMiB;
  // The bytes NVML gave on the H200 (615.0625 and 143155.9375 MiB): nvidia-smi printed 616 and
  // 143156, so CSV rounds up; JSON keeps the bytes.
  s.memory_reserved_bytes = std::uint64_t{644939776};
  s.memory_used_bytes = 0U;
  s.memory_free_bytes = std::uint64_t{150109880320};
  s.temperature_gpu_c = 38U;
  s.temperature_memory_c = 40U;
  s.power_draw_w = 78.91;
  s.power_draw_instant_w = 78.91;
  s.power_draw_average_w = 78.91;
  s.pcie_link_gen = 5U;
  s.pcie_link_width = 16U;
  s.utilization_encoder_pct = 0U;
  s.utilization_decoder_pct = 0U;
  s.utilization_jpeg_pct = 0U;
  s.utilization_ofa_pct = 0U;
  s.power_limit_w = 700.0;
  s.energy_mj = std::uint64_t{123456789012};
  s.sm_clock_mhz = 345U;
  s.mem_clock_mhz = 3201U;
  s.graphics_clock_mhz = 345U;
  s.pstate = 0U;
  s.fan_speed_pct = Reading<unsigned>::missing(Missing::kNotSupported);
  s.clock_event_reasons = std::uint64_t{kClockEventGpuIdle};
  s.ecc_corrected_volatile = std::uint64_t{0};
  s.ecc_uncorrected_volatile = std::uint64_t{0};
  for (Reading<std::uint64_t> DeviceSample::*held :
       {&DeviceSample::clock_event_sw_power_cap_ns, &DeviceSample::clock_event_sync_boost_ns,
        &DeviceSample::clock_event_sw_thermal_ns, &DeviceSample::clock_event_hw_thermal_ns,
        &DeviceSample::clock_event_hw_power_brake_ns}) {
    s.*held = std::uint64_t{0};  // the capture's idle H200: 0 us each
  }
  s.temperature_margin_c = 52;
  s.bar1_total_bytes = 262144 * kMiB;         // the capture's 256 GiB aperture, 1 MiB of it mapped
  s.bar1_used_bytes = 1 * kMiB + 300 * 1024;  // nvidia-smi prints 1 MiB used, 262143 free
  return s;
}

std::unique_ptr<TestBackend> h200_backend(unsigned gpus) {
  auto b = std::make_unique<TestBackend>();
  b->system_info = h200_system();
  for (unsigned i = 0; i < gpus; ++i) {
    DeviceStatic d = h200_static();
    if (i > 0) {
      d.uuid = "GPU-5ca1ab1e-0000-4000-8000-00000000000" + std::to_string(i);
      d.pci_bus_id = "00000000:" + std::to_string(18 + i) + ":00.0";
      d.serial = "165000000000" + std::to_string(i);
    }
    b->add(d, h200_idle_sample());
  }
  return b;
}

bool ManualClock::sleep_until(TimePoint deadline) {
  sleeps.push_back(deadline);
  if (deadline > time) time = deadline;
  if (on_sleep) on_sleep(*this);
  return !stop;
}

RunResult run_query(const std::vector<std::string>& args,
                    const std::shared_ptr<TestBackend>& backend, LoopClock* clock) {
  ManualClock fallback;
  detail::QueryEnvironment env;
  env.open_backend = [backend](QueryError* error) -> std::unique_ptr<GpuBackend> {
    if (!backend) {
      *error = detail::open_failure(
          {NvmlOpenError::Kind::kNoDriver, 0,
           "cannot load NVML (libnvidia-ml.so.1): not found. Is the NVIDIA driver installed?"});
      return nullptr;
    }
    return std::make_unique<Forwarding>(backend);
  };
  env.clock = clock != nullptr ? clock : &fallback;
  std::ostringstream out;
  std::ostringstream err;
  RunResult r;
  r.rc = detail::run_query_command(args, out, err, env);
  r.out = out.str();
  r.err = err.str();
  return r;
}

}  // namespace gpumon::query::testing
