// SPDX-License-Identifier: MIT
// Throttle causes of a GpuPoint, by the one definition of throttling (gpu/throttle.h): a raw
// sample's causes, a bucket's stored counts of them.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>

#include "diagnose/run_data.h"
#include "gpu/throttle.h"

namespace gpumon::diagnose {

struct ThrottleCounts {
  std::int32_t thermal = 0, power = 0, hw_slowdown = 0;
  std::int32_t any() const { return thermal > 0 || power > 0 || hw_slowdown > 0; }
};

/// For one raw sample: gpumon::throttle_causes() as counts of 0 or 1.
ThrottleCounts sample_throttle(std::uint64_t reasons, const std::optional<double>& sm_clock_mhz,
                               const std::optional<double>& max_sm_clock_mhz);
/// For a point: the stored counters of a bucket, or sample_throttle of a raw sample. `any` is
/// then a count of samples only for raw points; use samples_throttled().
ThrottleCounts point_throttle(const GpuPoint& p, const std::optional<double>& max_sm_clock_mhz);
/// Samples of `p` with any throttle cause (a bucket: the largest cause count, a lower bound).
std::int32_t samples_throttled(const GpuPoint& p, const std::optional<double>& max_sm_clock_mhz);

}  // namespace gpumon::diagnose
