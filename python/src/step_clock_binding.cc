// SPDX-License-Identifier: MIT
// _gpumon.StepClock: src/client/step_clock.h for the Python Monitor, so a training step costs one
// call into C++ (no message formatting in Python). The calls a step makes return True when the
// Monitor's housekeeping is due (handing the messages to the client, looking for new findings),
// at most every housekeeping_interval_s. The allocator source and the GPU timer are Python
// objects, called from within those calls at their bounded rates; what they raise passes through
// to the Monitor, which then disables itself with one warning.
#include "step_clock_binding.h"

#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "agent/agent_client.h"
#include "client/step_clock.h"

namespace py = pybind11;

namespace gpumon::python {
namespace {

using client::StepClock;
using Clock = StepClock::Clock;

// torch.cuda.memory_stats() keys of the fields a step message carries (the "all" pool).
std::optional<std::int64_t> stat(const py::dict& stats, const char* key) {
  PyObject* v = PyDict_GetItemString(stats.ptr(), key);  // borrowed; no exception when absent
  if (v == nullptr || !PyLong_Check(v)) return std::nullopt;
  const long long n = PyLong_AsLongLong(v);
  if (n == -1 && PyErr_Occurred()) {
    PyErr_Clear();  // beyond 64 bits: not a byte count we can carry
    return std::nullopt;
  }
  return n;
}

AllocatorStats torch_allocator_stats(const py::dict& s) {
  AllocatorStats a;
  a.allocated_bytes = stat(s, "allocated_bytes.all.current");
  a.reserved_bytes = stat(s, "reserved_bytes.all.current");
  a.active_bytes = stat(s, "active_bytes.all.current");
  a.inactive_split_bytes = stat(s, "inactive_split_bytes.all.current");
  a.allocated_peak_bytes = stat(s, "allocated_bytes.all.peak");
  a.reserved_peak_bytes = stat(s, "reserved_bytes.all.peak");
  a.num_alloc_retries = stat(s, "num_alloc_retries");
  a.num_ooms = stat(s, "num_ooms");
  return a;
}

// A Python object with record() -> int and elapsed(from, to) -> float seconds or None.
class PyGpuTimer : public client::GpuTimer {
 public:
  explicit PyGpuTimer(py::object timer) : timer_(std::move(timer)) {}
  ~PyGpuTimer() override {
    py::gil_scoped_acquire gil;  // the clock may drop it from any call
    timer_ = py::object();
  }
  int record() override { return timer_.attr("record")().cast<int>(); }
  std::optional<double> elapsed(int from, int to) override {
    py::object s = timer_.attr("elapsed")(from, to);
    if (s.is_none()) return std::nullopt;
    return s.cast<double>();
  }

 private:
  py::object timer_;
};

class PyStepClock {
 public:
  PyStepClock(std::size_t keep_recent, double housekeeping_interval_s)
      : clock_(options(keep_recent)),
        housekeeping_(std::chrono::duration_cast<Clock::duration>(
            std::chrono::duration<double>(housekeeping_interval_s))) {}

  StepClock& clock() { return clock_; }
  const StepClock& clock() const { return clock_; }

  // True at most every housekeeping interval.
  bool housekeeping_due() {
    const auto now = Clock::now();
    if (now < due_) return false;
    due_ = now + housekeeping_;
    return true;
  }

  void set_allocator_source(py::object fn, double interval_s) {
    if (fn.is_none()) {
      clock_.set_allocator_source({}, interval_s);
      return;
    }
    clock_.set_allocator_source(
        [fn = std::move(fn)]() { return torch_allocator_stats(fn().cast<py::dict>()); },
        interval_s);
  }

  void set_gpu_timer(py::object timer, double interval_s) {
    clock_.set_gpu_timer(timer.is_none() ? nullptr : std::make_shared<PyGpuTimer>(std::move(timer)),
                         interval_s);
  }

  // Hands the messages to `client`: a _gpumon.Client in C++, anything else through send().
  std::size_t hand_to(const py::object& client) {
    if (py::isinstance<agent::AgentClient>(client)) {
      auto& c = client.cast<agent::AgentClient&>();
      return clock_.drain([&c](const std::string& line) { c.send(line); });
    }
    py::object send = client.attr("send");
    return clock_.drain([&send](const std::string& line) { send(line); });
  }

 private:
  static client::StepClockOptions options(std::size_t keep_recent) {
    client::StepClockOptions o;
    o.keep_recent = keep_recent;
    return o;
  }

  StepClock clock_;
  Clock::duration housekeeping_;
  Clock::time_point due_{};
};

// The calls a step makes, as plain CPython functions (METH_NOARGS) whose self is a capsule of
// the clock: a pybind11 method runs its generic dispatcher, whose code is cold after the
// context switches of a training step; on a paced loop that cost ~2 us a call, these ~0.
constexpr const char* kCapsule = "gpumon._gpumon.StepClock";

template <bool (*Call)(PyStepClock&)>
PyObject* fast_call(PyObject* self, PyObject* /*unused*/) {
  auto* clock = static_cast<PyStepClock*>(PyCapsule_GetPointer(self, kCapsule));
  if (clock == nullptr) return nullptr;
  try {
    return PyBool_FromLong(Call(*clock) ? 1 : 0);
  } catch (py::error_already_set& e) {  // the allocator source's or the timer's own error
    e.restore();
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  }
  return nullptr;
}

bool step(PyStepClock& c) {
  c.clock().step_deferred();
  return c.housekeeping_due();
}
bool fetch_begin(PyStepClock& c) {
  c.clock().fetch_begin();
  return c.housekeeping_due();
}
bool fetch_end(PyStepClock& c) {
  c.clock().fetch_end();
  return false;
}
bool end_scoped(PyStepClock& c) {
  c.clock().end_scoped();
  return c.housekeeping_due();
}

PyMethodDef kFastCalls[] = {
    {"step", fast_call<&step>, METH_NOARGS, "A step boundary; True: housekeeping due."},
    {"fetch_begin", fast_call<&fetch_begin>, METH_NOARGS, "Before next(loader); True: due."},
    {"fetch_end", fast_call<&fetch_end>, METH_NOARGS, "After next(loader)."},
    {"end_scoped", fast_call<&end_scoped>, METH_NOARGS, "The end of `with mon.step()`."},
};

// {name: function} for kFastCalls; the capsule keeps the clock's Python object alive.
py::dict fast_calls(const py::object& self) {
  auto* clock = self.cast<PyStepClock*>();
  PyObject* capsule = PyCapsule_New(clock, kCapsule, [](PyObject* cap) {
    Py_XDECREF(static_cast<PyObject*>(PyCapsule_GetContext(cap)));
  });
  if (capsule == nullptr) throw py::error_already_set();
  py::object owner = py::reinterpret_steal<py::object>(capsule);
  if (PyCapsule_SetContext(capsule, self.inc_ref().ptr()) != 0) throw py::error_already_set();
  py::dict out;
  for (PyMethodDef& def : kFastCalls) {
    PyObject* fn = PyCFunction_New(&def, capsule);
    if (fn == nullptr) throw py::error_already_set();
    out[def.ml_name] = py::reinterpret_steal<py::object>(fn);
  }
  return out;
}

}  // namespace

void bind_step_clock(py::module_& m) {
  py::class_<PyStepClock>(
      m, "StepClock", "The step clock of src/client/step_clock.h; see python/gpumon/_monitor.py")
      .def(py::init<std::size_t, double>(), py::arg("keep_recent") = 64,
           py::arg("housekeeping_interval_s") = 0.2)
      .def("set_allocator_source", &PyStepClock::set_allocator_source, py::arg("fn"),
           py::arg("interval_s"), "fn() -> torch.cuda.memory_stats()-like dict, or None")
      .def("set_gpu_timer", &PyStepClock::set_gpu_timer, py::arg("timer"), py::arg("interval_s"),
           "timer.record() -> int, timer.elapsed(a, b) -> seconds or None; or None")
      .def("fast_calls", &fast_calls,
           "{name: function} of the per-step calls (step, fetch_begin, fetch_end, end_scoped)")
      .def("begin_scoped", [](PyStepClock& c) { c.clock().begin_scoped(); })
      .def("begin_epoch", [](PyStepClock& c) { c.clock().begin_epoch(); })
      .def("add_data_wait", [](PyStepClock& c, double s) { c.clock().add_data_wait(s); })
      .def("finish", [](PyStepClock& c) { c.clock().finish(); })
      .def("steps", [](const PyStepClock& c) { return c.clock().steps(); })
      .def("recent", [](PyStepClock& c) { return c.clock().recent(); })
      .def("hand_to", &PyStepClock::hand_to, py::arg("client"));
}

}  // namespace gpumon::python
