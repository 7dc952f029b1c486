// SPDX-License-Identifier: MIT
// The calls a training step makes, as CPython code with no Python frame and no pybind11
// dispatcher: after a step's millions of instructions of other work, each of those is cold, and
// on the H200 host gpumon's calls cost ~10 us a step cold against ~1 hot (docs/PERFORMANCE.md).
//   step_call(...)   a function for `mon.step()`: a step boundary; returns the step's context
//                    manager (for `with mon.step():`), or a null one when the clock is off
//   step_scope(...)  the context manager step_call returns: `with mon.step():` times the body
//                    and hands a CUDA OOM leaving it to monitor._on_error()
//   timed_iter(...)  the iterator `for batch in mon.wrap(loader)` runs: times each next()
//   wait_call(...)   a function taking seconds of data wait the zero-code hooks measured
//                    (gpumon/_auto.py), for the step in progress
// When housekeeping is due they hand the steps to the client (PyStepClock::hand_over) and, when
// it asks, call monitor._housekeeping(); when the clock (its allocator source or GPU timer) or
// either raises, monitor._fail(exception), which switches the clock off.
// They never raise into the training loop; the loader's own errors pass through untouched.
// The monitor is held by a weak reference, so a Monitor holding these is not kept alive by them.
#pragma once

#include <pybind11/pybind11.h>

namespace gpumon::python {

/// `clock` is a _gpumon.StepClock; `monitor` a weakref.ref to the Monitor.
pybind11::object step_call(const pybind11::object& clock, const pybind11::object& ctx,
                           const pybind11::object& null_ctx, const pybind11::object& monitor);
pybind11::object step_scope(const pybind11::object& clock, const pybind11::object& monitor);
pybind11::object timed_iter(const pybind11::object& clock, const pybind11::object& iterator,
                            const pybind11::object& monitor);
pybind11::object wait_call(const pybind11::object& clock, const pybind11::object& monitor);

}  // namespace gpumon::python
