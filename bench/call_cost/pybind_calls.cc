// SPDX-License-Identifier: MIT
// A do-nothing function and method bound with pybind11, for bench/call_cost/run.sh.
#include <pybind11/pybind11.h>
namespace py = pybind11;
struct Obj { long n = 0; };
PYBIND11_MODULE(pybind_calls, m) {
  m.def("noop", [](py::object) { return py::none(); });
  py::class_<Obj>(m, "Obj").def(py::init<>()).def("step", [](Obj& o) { ++o.n; });
}
