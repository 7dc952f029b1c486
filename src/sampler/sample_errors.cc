// SPDX-License-Identifier: MIT
#include "sampler/sample_errors.h"

#include "gpu/metric_catalog.h"

namespace gpumon {

std::uint64_t count_errors(const DeviceSample& s) {
  std::uint64_t n = 0;
  for (const MetricInfo& m : metric_catalog()) n += metric_missing(s, m.id) == Missing::kError;
  return n;
}

}  // namespace gpumon
