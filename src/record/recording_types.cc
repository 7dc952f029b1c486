// SPDX-License-Identifier: MIT
#include "record/recording_types.h"

#include <cstdio>
#include <ctime>

namespace gpumon::record {
namespace {

template <typename T>
std::optional<std::int64_t> as_int(const Reading<T>& r) {
  if (!r.has_value()) return std::nullopt;
  return static_cast<std::int64_t>(r.value());
}

std::optional<std::string> as_text(const Reading<std::string>& r) {
  if (!r.has_value()) return std::nullopt;
  return r.value();
}

}  // namespace

RecordedEvent recorded_event(const GpuEvent& e) {
  auto kind = [](GpuEvent::Kind k) -> std::string {
    switch (k) {
      case GpuEvent::Kind::kXid: return "xid";
      case GpuEvent::Kind::kEccSingleBit: return "ecc_single_bit";
      case GpuEvent::Kind::kEccDoubleBit: return "ecc_double_bit";
      case GpuEvent::Kind::kLost: return "lost";
      case GpuEvent::Kind::kRecovered: return "recovered";
    }
    return "unknown";
  };
  return {e.gpu, to_unix_ms(e.wall_time), kind(e.kind), static_cast<std::int64_t>(e.value)};
}

RecordedDevice recorded_device(const DeviceStatic& d) {
  RecordedDevice r;
  r.index = d.index;
  r.name = as_text(d.name);
  r.uuid = as_text(d.uuid);
  r.pci_bus_id = as_text(d.pci_bus_id);
  r.memory_total_bytes = as_int(d.memory_total_bytes);
  r.max_sm_clock_mhz = as_int(d.max_sm_clock_mhz);
  r.max_mem_clock_mhz = as_int(d.max_mem_clock_mhz);
  r.max_graphics_clock_mhz = as_int(d.max_graphics_clock_mhz);
  return r;
}

std::optional<unsigned> gpu_of_pid(const std::vector<RecordedProcess>& processes,
                                   std::int64_t pid) {
  std::optional<unsigned> best;
  std::int64_t best_mem = -1;
  for (const auto& p : processes) {
    if (static_cast<std::int64_t>(p.pid) != pid) continue;
    const std::int64_t mem = p.max_used_memory_bytes.value_or(0);
    if (mem > best_mem) best = p.gpu, best_mem = mem;
  }
  return best;
}

std::int64_t to_unix_ms(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

std::string format_iso_ms(std::int64_t unix_ms) {
  const std::int64_t ms = ((unix_ms % 1000) + 1000) % 1000;
  const std::time_t secs = static_cast<std::time_t>((unix_ms - ms) / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[40];
  const std::size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  std::string out(buf, n);
  char frac[8];
  std::snprintf(frac, sizeof frac, ".%03dZ", static_cast<int>(ms));
  return out + frac;
}

}  // namespace gpumon::record
