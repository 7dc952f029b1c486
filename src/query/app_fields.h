// SPDX-License-Identifier: MIT
// The `--query-compute-apps` field registry: one row per field of a compute process.
#pragma once

#include <vector>

#include "gpu/gpu_types.h"
#include "query/field.h"

namespace gpumon::query {

/// Everything one `--query-compute-apps` output row is made from.
struct AppRowSource {
  const DeviceStatic& device;  ///< the GPU the process runs on
  const GpuProcess& process;
  WallTime time;  ///< when the process list was read
};

using AppField = FieldSpec<AppRowSource>;

/// All `--query-compute-apps` fields, in the order --help-query-compute-apps lists them.
const std::vector<AppField>& app_fields();

}  // namespace gpumon::query
