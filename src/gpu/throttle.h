// SPDX-License-Identifier: MIT
// Throttling, defined once for the report, the diagnosis and the live views: a sample is
// throttled when a clock event reason that holds the GPU back is set while its SM clock is below
// max (a reason bit at full clocks costs nothing).
//
// - thermal (sw 0x20, hw 0x40) and hardware slowdown (0x8, and the power brake 0x80, an
//   external hardware signal) count below kAtMaxClockRatio of the max SM clock, or when either
//   clock is unknown;
// - the power cap (0x4) counts only below kPowerCapClockRatio of max, so never with an unknown
//   clock: at its default limit a GPU under dense load runs at the cap by design (the real H200
//   GEMM recording: every sample capped, at 88 % of max clock); a lowered limit or a weak supply
//   pushes clocks much further down.
// Idle, application clocks, sync boost and display clock settings are never throttling.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>

#include "gpu/gpu_types.h"

namespace gpumon {

/// The reason bits that can mean throttling (whether they do depends on the SM clock).
inline constexpr std::uint64_t kThrottleReasonMask =
    kClockEventSwPowerCap | kClockEventHwSlowdown | kClockEventSwThermalSlowdown |
    kClockEventHwThermalSlowdown | kClockEventHwPowerBrakeSlowdown;
inline constexpr std::uint64_t kThermalReasons =
    kClockEventSwThermalSlowdown | kClockEventHwThermalSlowdown;
inline constexpr std::uint64_t kHwSlowdownReasons =
    kClockEventHwSlowdown | kClockEventHwPowerBrakeSlowdown;
inline constexpr std::uint64_t kPowerCapReasons = kClockEventSwPowerCap;

/// A clock this close to max (ratio) counts as at max: boost clocks wander by a few MHz.
inline constexpr double kAtMaxClockRatio = 0.97;
/// The power cap counts only below this share of max clock (see above).
inline constexpr double kPowerCapClockRatio = 0.8;

/// What held one sample back.
struct ThrottleCauses {
  bool thermal = false, power_cap = false, hw_slowdown = false;
  bool any() const { return thermal || power_cap || hw_slowdown; }
};

/// The causes of one sample with clock event reasons `reasons`, SM clock `sm_clock_mhz` and
/// the device's max SM clock `max_sm_clock_mhz` (either unknown: nullopt).
ThrottleCauses throttle_causes(std::uint64_t reasons, const std::optional<double>& sm_clock_mhz,
                               const std::optional<double>& max_sm_clock_mhz);

}  // namespace gpumon
