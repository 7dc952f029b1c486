// SPDX-License-Identifier: MIT
// MetricGroup: the dynamic readings GpuBackend::sample() reads, one NVML call (or one batched
// field-value call) each, and MetricSet, a set of them. The metric catalog says which group
// reads each metric.
//
// Thread-safety: plain values.
#pragma once

#include <cstdint>

namespace gpumon {

/// Groups of dynamic readings; each costs one NVML call (or one batched field-value call), so a
/// caller asks only for what it will show. See DESIGN.md for what each call costs.
enum class MetricGroup : std::uint32_t {
  kUtilization = 1U << 0,        ///< utilization_gpu_pct, utilization_memory_pct
  kMemory = 1U << 1,             ///< memory_{total,reserved,used,free}_bytes
  kTemperature = 1U << 2,        ///< temperature_gpu_c
  kMemoryTemperature = 1U << 3,  ///< temperature_memory_c (field values)
  kPower = 1U << 4,              ///< power_draw_w
  kPowerInstant = 1U << 5,       ///< power_draw_instant_w (field values)
  kPowerLimit = 1U << 6,         ///< power_limit_w
  kEnergy = 1U << 7,             ///< energy_mj (slow: about 2.4 ms on an H200)
  kSmClock = 1U << 8,
  kMemClock = 1U << 9,
  kGraphicsClock = 1U << 10,
  kPstate = 1U << 11,
  kFan = 1U << 12,
  kClockEvents = 1U << 13,
  kEcc = 1U << 14,  ///< ecc_{corrected,uncorrected}_volatile
  /// Not a reading: the slow static facts of DeviceStatic (max clocks, persistence, ECC,
  /// compute and MIG modes, VBIOS, PCIe link maxima; about 11 ms per H200). They are read once, by
  /// the first sample() that asks for them; until then device() reports them as kNotAvailable.
  /// Asking again costs nothing.
  kStaticDetails = 1U << 15,
  kPcieLinkGen = 1U << 16,       ///< pcie_link_gen (drops at idle to save power)
  kPcieLinkWidth = 1U << 17,     ///< pcie_link_width
  kEncoderUtil = 1U << 18,       ///< utilization_encoder_pct
  kDecoderUtil = 1U << 19,       ///< utilization_decoder_pct
  kPowerAverage = 1U << 20,      ///< power_draw_average_w (field values)
  kPcieReplay = 1U << 21,        ///< pcie_replay_count
  kRemappedRows = 1U << 22,      ///< remapped_rows_* (field values)
  kNvlinkThroughput = 1U << 23,  ///< nvlink_data_{tx,rx}_kib (field values)
  kJpegUtil = 1U << 24,          ///< utilization_jpeg_pct
  kOfaUtil = 1U << 25,           ///< utilization_ofa_pct
  /// clock_event_{sw_power_cap,sync_boost}_s (field values 74, 76: NVML's perf-policy time)
  kPerfPolicyTime = 1U << 26,
  /// clock_event_{sw_thermal,hw_thermal,hw_power_brake}_s (field values 269-271; newer drivers)
  kSlowdownTime = 1U << 27,
  kTemperatureMargin = 1U << 28,  ///< temperature_margin_c (nvmlDeviceGetMarginTemperature)
  kBar1Memory = 1U << 29,         ///< bar1_{total,used}_bytes
  /// The last group: all() is every bit up to it. A new group goes above and moves this.
  kLastGroup = kBar1Memory,
};

class MetricSet {
 public:
  constexpr MetricSet() = default;
  constexpr MetricSet(MetricGroup g) : bits_(static_cast<std::uint32_t>(g)) {}  // NOLINT
  static constexpr MetricSet all() {
    MetricSet s;
    s.bits_ = (static_cast<std::uint32_t>(MetricGroup::kLastGroup) << 1) - 1;
    return s;
  }
  /// Every group but energy. Includes kStaticDetails, which costs about 11 ms per H200 on the
  /// first sample that asks and nothing after.
  static constexpr MetricSet cheap() {
    MetricSet s = all();
    s.bits_ &= ~static_cast<std::uint32_t>(MetricGroup::kEnergy);
    return s;
  }
  constexpr bool has(MetricGroup g) const { return (bits_ & static_cast<std::uint32_t>(g)) != 0; }
  constexpr MetricSet& operator|=(MetricSet o) {
    bits_ |= o.bits_;
    return *this;
  }
  friend constexpr MetricSet operator|(MetricSet a, MetricSet b) { return a |= b; }
  constexpr bool empty() const { return bits_ == 0; }
  constexpr std::uint32_t bits() const { return bits_; }

 private:
  std::uint32_t bits_ = 0;
};

}  // namespace gpumon
