// SPDX-License-Identifier: MIT
// _gpumon.StepClock: src/client/step_clock.h for the Python Monitor, so a training step costs
// calls into C++ only (no Python frame, no message formatting in Python): the per-step calls are
// in step_calls.cc. At most every housekeeping_interval_s they hand the messages to the client
// (PyStepClock::hand_over, in C++), and call the Monitor's Python housekeeping only when there
// is news for it (a lost agent, new findings). The allocator source and the GPU
// timer are Python objects, called from within those calls at their bounded rates; what they
// raise goes to the Monitor, which then switches itself off with one warning.
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
#include "py_step_clock.h"
#include "step_calls.h"

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

}  // namespace

PyStepClock::PyStepClock(std::size_t keep_recent, double housekeeping_interval_s)
    : clock_([keep_recent] {
        client::StepClockOptions o;
        o.keep_recent = keep_recent;
        return o;
      }()),
      hand_over_(std::chrono::duration_cast<Clock::duration>(
          std::chrono::duration<double>(housekeeping_interval_s))),
      generation_(agent::fork_generation()) {}

void PyStepClock::set_allocator_source(py::object fn, double interval_s) {
  if (fn.is_none()) {
    clock_.set_allocator_source({}, interval_s);
    return;
  }
  clock_.set_allocator_source(
      [fn = std::move(fn)]() { return torch_allocator_stats(fn().cast<py::dict>()); }, interval_s);
}

void PyStepClock::set_gpu_timer(py::object timer, double interval_s) {
  clock_.set_gpu_timer(timer.is_none() ? nullptr : std::make_shared<PyGpuTimer>(std::move(timer)),
                       interval_s);
}

void PyStepClock::switch_off() {
  on_ = false;
  client_ = nullptr;
  client_obj_ = py::object();
}

void PyStepClock::attach(py::object client) {
  client_ =
      py::isinstance<agent::AgentClient>(client) ? &client.cast<agent::AgentClient&>() : nullptr;
  client_obj_ = std::move(client);
  if (client_ == nullptr) return;
  seen_disconnects_ = client_->disconnects();
  seen_findings_ = client_->findings_seq();
}

bool PyStepClock::hand_over() {
  if (client_ == nullptr) return true;
  clock_.drain([this](const std::string& line) { client_->enqueue(line); });
  client_->flush();  // one write for the batch
  const std::uint64_t disconnects = client_->disconnects();
  const std::uint64_t findings = client_->findings_seq();
  const bool news = disconnects != seen_disconnects_ || findings != seen_findings_ ||
                    std::exchange(housekeeping_asked_, false) || housekeeping_kept_;
  seen_disconnects_ = disconnects;
  seen_findings_ = findings;
  return news;
}

std::size_t PyStepClock::hand_to(const py::object& client) {
  if (py::isinstance<agent::AgentClient>(client)) {
    auto& c = client.cast<agent::AgentClient&>();
    // Queued only: the Monitor's flush() right after writes them with one system call.
    return clock_.drain([&c](const std::string& line) { c.enqueue(line); });
  }
  py::object send = client.attr("send");
  return clock_.drain([&send](const std::string& line) { send(line); });
}

void bind_step_clock(py::module_& m) {
  py::class_<PyStepClock>(
      m, "StepClock", "The step clock of src/client/step_clock.h; see python/gpumon/_monitor.py")
      .def(py::init<std::size_t, double>(), py::arg("keep_recent") = 64,
           py::arg("housekeeping_interval_s") =
               std::chrono::duration<double>(client::HandOverSchedule::kInterval).count())
      .def("set_allocator_source", &PyStepClock::set_allocator_source, py::arg("fn"),
           py::arg("interval_s"), "fn() -> torch.cuda.memory_stats()-like dict, or None")
      .def("set_gpu_timer", &PyStepClock::set_gpu_timer, py::arg("timer"), py::arg("interval_s"),
           "timer.record() -> int, timer.elapsed(a, b) -> seconds or None; or None")
      .def("step_call", &step_call, py::arg("ctx"), py::arg("null_ctx"), py::arg("monitor"),
           "The function for mon.step(): returns ctx, or null_ctx when the clock is off; "
           "monitor is a weakref.ref to the Monitor (see step_calls.h)")
      .def("step_scope", &step_scope, py::arg("monitor"),
           "The context manager mon.step() returns (see step_calls.h)")
      .def("timed_iter", &timed_iter, py::arg("iterator"), py::arg("monitor"),
           "The iterator for mon.wrap(loader): times each next(iterator)")
      .def("wait_call", &wait_call, py::arg("monitor"),
           "A function f(seconds) adding data wait to the step in progress (see step_calls.h)")
      .def_property_readonly("active", &PyStepClock::active, "On, and in the process that made it")
      .def("switch_off", &PyStepClock::switch_off, "The per-step calls do nothing from now on")
      .def("begin_scoped", [](PyStepClock& c) { c.clock().begin_scoped(); })
      .def("begin_epoch", [](PyStepClock& c) { c.clock().begin_epoch(); })
      .def("add_data_wait", [](PyStepClock& c, double s) { c.clock().add_data_wait(s); })
      .def("finish", [](PyStepClock& c) { c.clock().finish(); })
      .def("steps", [](const PyStepClock& c) { return c.clock().steps(); })
      .def("recent", [](PyStepClock& c) { return c.clock().recent(); })
      .def("hand_to", &PyStepClock::hand_to, py::arg("client"))
      .def("attach", &PyStepClock::attach, py::arg("client"),
           "The client the step calls' hand-over writes to (see py_step_clock.h)")
      .def("hand_over", &PyStepClock::hand_over,
           "The step calls' hand-over now; True when the Monitor's housekeeping must run too")
      .def("ask_housekeeping", &PyStepClock::ask_housekeeping,
           "The next hand-over runs the Monitor's housekeeping")
      .def("keep_housekeeping", &PyStepClock::keep_housekeeping, py::arg("on"),
           "While on, every hand-over runs the Monitor's housekeeping");
}

}  // namespace gpumon::python
