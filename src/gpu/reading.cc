// SPDX-License-Identifier: MIT
#include "gpu/reading.h"

namespace gpumon {

std::string_view to_string(Missing why) {
  switch (why) {
    case Missing::kNotAvailable: return "not available";
    case Missing::kNotSupported: return "not supported";
    case Missing::kNoPermission: return "insufficient permissions";
    case Missing::kGpuLost: return "GPU is lost";
    case Missing::kError: return "error";
    case Missing::kStale: return "stale (an NVML call has not returned)";
    case Missing::kDeprecated: return "deprecated by the driver";
  }
  return "error";
}

}  // namespace gpumon
