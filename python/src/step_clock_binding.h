// SPDX-License-Identifier: MIT
// _gpumon.StepClock (step_clock_binding.cc).
#pragma once

#include <pybind11/pybind11.h>

namespace gpumon::python {

void bind_step_clock(pybind11::module_& m);

}  // namespace gpumon::python
