// SPDX-License-Identifier: MIT
// The `--query-gpu` field registry: every field gpumon can print for a GPU, one table row each.
#pragma once

#include <vector>

#include "gpu/gpu_types.h"
#include "query/field.h"

namespace gpumon::query {

/// Everything one `--query-gpu` output row is made from.
struct GpuRowSource {
  const SystemInfo& system;
  const DeviceStatic& device;
  const DeviceSample& sample;  ///< read with the MetricGroups of the requested fields
  unsigned device_count = 0;   ///< GPUs in the system (the "count" field), not only those selected
};

using GpuField = FieldSpec<GpuRowSource>;

/// All `--query-gpu` fields, in the order --help-query-gpu lists them. Built once; immutable.
const std::vector<GpuField>& gpu_fields();

}  // namespace gpumon::query
