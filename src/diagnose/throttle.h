// SPDX-License-Identifier: MIT
// Throttle causes of a GpuPoint: the clock event reasons that hold a busy GPU back, counted
// only while the SM clock is below its max (a reason bit at full clocks costs nothing).
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>

#include "diagnose/run_data.h"

namespace gpumon::diagnose {

// NVML clock event reason bits (nvml.h): power cap 0x4, hw slowdown 0x8, sw thermal 0x20,
// hw thermal 0x40, hw power brake 0x80 (the same set as report::kThrottleReasons).
inline constexpr std::uint64_t kReasonPowerCap = 0x4, kReasonHwSlowdown = 0x8,
                               kReasonSwThermal = 0x20, kReasonHwThermal = 0x40,
                               kReasonPowerBrake = 0x80;
/// A clock this close to max (ratio) counts as at max: boost clocks wander by a few MHz.
inline constexpr double kAtMaxClockRatio = 0.97;
/// The power cap counts only below this share of max clock: at its default limit a GPU under
/// dense load runs at the cap by design (the real H200 GEMM recording: every sample capped, at
/// 88% of max clock); a lowered limit or a weak supply pushes clocks much further down.
inline constexpr double kPowerCapClockRatio = 0.8;

struct ThrottleCounts {
  std::int32_t thermal = 0, power = 0, hw_slowdown = 0;
  std::int32_t any() const { return thermal > 0 || power > 0 || hw_slowdown > 0; }
};

/// For one raw sample: which causes it had while below max clocks (thermal and hw slowdown
/// count when the clock is unknown; the power cap needs a clock below kPowerCapClockRatio).
/// The power brake (0x80) is an external hardware signal: counted as hw slowdown.
ThrottleCounts sample_throttle(std::uint64_t reasons, const std::optional<double>& sm_clock_mhz,
                               const std::optional<double>& max_sm_clock_mhz);
/// For a point: the stored counters of a bucket, or sample_throttle of a raw sample. `any` is
/// then a count of samples only for raw points; use samples_throttled().
ThrottleCounts point_throttle(const GpuPoint& p, const std::optional<double>& max_sm_clock_mhz);
/// Samples of `p` with any throttle cause (a bucket: the largest cause count, a lower bound).
std::int32_t samples_throttled(const GpuPoint& p, const std::optional<double>& max_sm_clock_mhz);

}  // namespace gpumon::diagnose
