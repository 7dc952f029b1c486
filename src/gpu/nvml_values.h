// SPDX-License-Identifier: MIT
// Reading NVML's typed values (nvmlValue_t) and a batched field value's status: shared by the
// sample's field values, the driver's sample buffers and the report's details.
#pragma once

#include "nvml/nvml_abi.h"

namespace gpumon {

/// A typed NVML value as a double (every integer NVML gives fits one exactly below 2^53).
inline double nvml_number(nvmlValueType_t type, const nvmlValue_t& v) {
  switch (type) {
    case NVML_VALUE_TYPE_DOUBLE: return v.dVal;
    case NVML_VALUE_TYPE_UNSIGNED_INT: return v.uiVal;
    case NVML_VALUE_TYPE_UNSIGNED_LONG: return static_cast<double>(v.ulVal);
    case NVML_VALUE_TYPE_UNSIGNED_LONG_LONG: return static_cast<double>(v.ullVal);
    case NVML_VALUE_TYPE_SIGNED_LONG_LONG: return static_cast<double>(v.sllVal);
    case NVML_VALUE_TYPE_SIGNED_INT: return v.siVal;
    case NVML_VALUE_TYPE_UNSIGNED_SHORT: return v.usVal;
  }
  return v.uiVal;
}

/// One field's outcome in a batched nvmlDeviceGetFieldValues: the call's error when the call
/// failed, else the field's own status. A driver that does not know a field id answers
/// INVALID_ARGUMENT in that field's status: it is NOT_SUPPORTED there.
inline nvmlReturn_t field_status(nvmlReturn_t call_rc, const nvmlFieldValue_t& v) {
  if (call_rc != NVML_SUCCESS) return call_rc;
  return v.nvmlReturn == NVML_ERROR_INVALID_ARGUMENT ? NVML_ERROR_NOT_SUPPORTED : v.nvmlReturn;
}

}  // namespace gpumon
