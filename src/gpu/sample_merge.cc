// SPDX-License-Identifier: MIT
#include "gpu/gpu_backend.h"
#include "gpu/metric_catalog.h"

namespace gpumon {

void merge_groups(DeviceSample& into, const DeviceSample& from, MetricSet groups) {
  if (from.lost) into.lost = true;
  for (const MetricInfo& m : metric_catalog())
    if (m.group && groups.has(*m.group)) copy_metric(into, from, m.id);
}

}  // namespace gpumon
