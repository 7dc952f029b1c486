// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>

#include "gpu/gpu_types.h"

namespace gpumon {

/// How many readings of `s` came back Missing::kError (an NVML error other than not
/// supported, no permission or GPU lost): what SamplerStats::nvml_errors counts.
std::uint64_t count_errors(const DeviceSample& s);

}  // namespace gpumon
