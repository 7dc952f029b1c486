// SPDX-License-Identifier: MIT
// A broken "NVML" for the loader's tests: it exports nvmlInit and nothing else, so loading it
// must fail naming the required entry points it lacks.
#include "nvml/nvml_abi.h"

extern "C" __attribute__((visibility("default"))) nvmlReturn_t nvmlInit(void) {
  return NVML_SUCCESS;
}
