// SPDX-License-Identifier: MIT
#include "record/test_support.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "record/quantize.h"

namespace gpumon::record::testing {

DeviceSample busy_sample(unsigned gpu, int i) {
  DeviceSample s;
  s.index = gpu;
  s.utilization_gpu_pct = static_cast<unsigned>((i * 37 + gpu * 11) % 101);
  s.utilization_memory_pct = static_cast<unsigned>((i * 13) % 60);
  s.memory_total_bytes = std::uint64_t{150754820096};
  s.memory_used_bytes = std::uint64_t{126000000000} + static_cast<std::uint64_t>(i % 7) * 2097152;
  s.memory_free_bytes = *s.memory_total_bytes - *s.memory_used_bytes;
  s.memory_reserved_bytes = std::uint64_t{595853312};
  s.temperature_gpu_c = 55u + static_cast<unsigned>(i % 9);
  s.temperature_memory_c = Reading<unsigned>::missing(Missing::kNotSupported);
  s.power_draw_w = 450.0 + (i % 50) * 4.321;
  s.power_draw_instant_w = 600.0 - (i % 23) * 7.5;
  s.power_limit_w = 700.0;
  s.energy_mj = std::uint64_t{9876543210} + static_cast<std::uint64_t>(i) * 650123;
  s.sm_clock_mhz = i % 20 < 15 ? 1980u : 1755u;
  s.mem_clock_mhz = 3201u;
  s.graphics_clock_mhz = *s.sm_clock_mhz;
  s.pstate = 0u;
  s.fan_speed_pct = Reading<unsigned>::missing(Missing::kNotSupported);
  s.clock_event_reasons =
      i % 20 < 15 ? std::uint64_t{0} : std::uint64_t{kClockEventSwThermalSlowdown};
  s.ecc_corrected_volatile = std::uint64_t{i >= 40 ? 2u : 1u};
  s.ecc_uncorrected_volatile = std::uint64_t{0};
  s.sm_active_ratio = 0.5 + (i % 10) * 0.0371;
  s.tensor_active_ratio = (i % 3 == 0) ? Reading<double>::missing(Missing::kNotAvailable)
                                       : Reading<double>(0.25 + (i % 5) * 0.1);
  return s;
}

TickSample make_tick(unsigned gpus, int i, std::int64_t start_ms, int interval_ms) {
  TickSample t;
  t.wall_time =
      WallClock::time_point(std::chrono::milliseconds(start_ms + std::int64_t{i} * interval_ms));
  for (unsigned g = 0; g < gpus; ++g) {
    t.gpus.push_back(busy_sample(g, i));
    t.gpus.back().wall_time = t.wall_time;
  }
  return t;
}

std::vector<DeviceStatic> make_devices(unsigned gpus) {
  std::vector<DeviceStatic> out;
  for (unsigned g = 0; g < gpus; ++g) {
    DeviceStatic d;
    d.index = g;
    d.name = std::string("NVIDIA H200");
    d.uuid = "GPU-0000000" + std::to_string(g) + "-aaaa-bbbb-cccc-dddddddddddd";
    d.pci_bus_id = "00000000:1" + std::to_string(g) + ":00.0";
    d.memory_total_bytes = std::uint64_t{150754820096};
    d.max_sm_clock_mhz = 1980u;
    d.max_mem_clock_mhz = 3201u;
    out.push_back(d);
  }
  return out;
}

RunInfo test_run_info() {
  return RunInfo{"testhost", "0.1.0", "python3 train.py", "580.159.04", "unit-test"};
}

std::optional<double> expected_value(const DeviceSample& s, MetricId id) {
  const auto v = metric_value(s, id);
  if (!v) return std::nullopt;
  const double quantum = metric_info(id).quantum;
  const auto q = quantize(*v, quantum);
  if (!q) return std::nullopt;
  return dequantize(*q, quantum);
}

std::vector<SampleRow> read_all_rows(const std::string& path) {
  std::string error;
  auto reader = RecordingReader::open(path, error);
  EXPECT_NE(reader, nullptr) << error;
  if (!reader) return {};
  SampleStream stream(*reader, std::nullopt);
  std::vector<SampleRow> rows;
  SampleRow row;
  while (stream.next(row)) rows.push_back(row);
  EXPECT_EQ(stream.error(), "");
  return rows;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

void copy_prefix(const std::string& from, const std::string& to, std::size_t size) {
  const std::string bytes = read_file(from);
  write_file(to, bytes.substr(0, std::min(size, bytes.size())));
}

}  // namespace gpumon::record::testing
