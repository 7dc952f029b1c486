// SPDX-License-Identifier: MIT
#include "step_calls.h"

#include <exception>
#include <memory>

#include "py_step_clock.h"

namespace py = pybind11;

namespace gpumon::python {
namespace {

// Runs clock work that may call Python (the allocator source, the GPU timer); false, with the
// Python error set, when it threw.
template <typename Fn>
bool guarded(Fn&& fn) {
  try {
    fn();
    return true;
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  }
  return false;
}

// The Monitor behind the weak reference (a new reference), or nullptr when it is gone.
PyObject* monitor_of(PyObject* ref) {
#if PY_VERSION_HEX >= 0x030D0000
  PyObject* mon = nullptr;
  if (PyWeakref_GetRef(ref, &mon) < 0) PyErr_Clear();
  return mon;
#else
  PyObject* mon = PyWeakref_GetObject(ref);  // borrowed
  if (mon == nullptr) PyErr_Clear();
  return mon == nullptr || mon == Py_None ? nullptr : Py_NewRef(mon);
#endif
}

// The exception being raised, taken out of the error indicator (a new reference).
PyObject* take_error() {
#if PY_VERSION_HEX >= 0x030C0000
  return PyErr_GetRaisedException();
#else
  PyObject *type = nullptr, *value = nullptr, *tb = nullptr;
  PyErr_Fetch(&type, &value, &tb);
  PyErr_NormalizeException(&type, &value, &tb);
  if (value != nullptr && tb != nullptr) PyException_SetTraceback(value, tb);
  Py_XDECREF(type);
  Py_XDECREF(tb);
  return value;
#endif
}

// monitor.<method>(arg) (no argument when arg is nullptr) through the weak reference. False,
// with the Python error set, when it raised; true when it ran or the Monitor is gone.
bool call_monitor(PyObject* monitor_ref, const char* method, PyObject* arg) {
  PyObject* mon = monitor_of(monitor_ref);
  if (mon == nullptr) return true;
  PyObject* r = arg != nullptr ? PyObject_CallMethod(mon, method, "O", arg)
                               : PyObject_CallMethod(mon, method, nullptr);
  Py_DECREF(mon);
  Py_XDECREF(r);
  return r != nullptr;
}

// With a Python error set: switches the clock off and hands the error to monitor._fail() (one
// warning). The error indicator is clear afterwards: nothing reaches the training loop.
GPUMON_COLD void fail(PyStepClock& clock, PyObject* monitor_ref) {
  clock.switch_off();
  PyObject* exc = take_error();
  if (!call_monitor(monitor_ref, "_fail", exc != nullptr ? exc : Py_None))
    PyErr_WriteUnraisable(monitor_ref);
  Py_XDECREF(exc);
}

// Due housekeeping: monitor._housekeeping(); what it raises goes to fail().
GPUMON_COLD void housekeeping(PyStepClock& clock, PyObject* monitor_ref) {
  if (!call_monitor(monitor_ref, "_housekeeping", nullptr)) fail(clock, monitor_ref);
}

// The clock work of one call, then the hand-over when it is due, and the Monitor's
// housekeeping when the hand-over asks for it.
template <typename Work>
void run(PyStepClock& clock, PyObject* monitor_ref, Work&& work) {
  bool due = false;
  if (!guarded([&] {
        work(clock.clock());
        due = clock.housekeeping_due() && clock.hand_over();
      })) {
    fail(clock, monitor_ref);
  } else if (due) {
    housekeeping(clock, monitor_ref);
  }
}

PyStepClock* clock_of(const py::object& clock) {
  return clock.cast<PyStepClock*>();  // a TypeError (cast_error) for anything else
}

void require_weakref(const py::object& monitor) {
  if (!PyWeakref_CheckRef(monitor.ptr())) throw py::type_error("monitor: a weakref.ref expected");
}

// ---- mon.step() ----

// The capsule that owns the StepCall of mon.step()'s function and of the hooks' wait_call.
constexpr const char* kCallCapsule = "gpumon._gpumon.step_call";

// Owns a reference to each object.
struct StepCall {
  StepCall(const py::object& clock_obj, PyStepClock* clock, const py::object& ctx,
           const py::object& null_ctx, const py::object& monitor)
      : clock_obj(clock_obj.inc_ref().ptr()),
        clock(clock),
        ctx(ctx.inc_ref().ptr()),
        null_ctx(null_ctx.inc_ref().ptr()),
        monitor(monitor.inc_ref().ptr()) {}
  StepCall(const StepCall&) = delete;
  StepCall& operator=(const StepCall&) = delete;
  PyObject* clock_obj;  // keeps the clock alive
  PyStepClock* clock;
  PyObject* ctx;
  PyObject* null_ctx;
  PyObject* monitor;  // weakref.ref
  ~StepCall() {
    Py_XDECREF(clock_obj);
    Py_XDECREF(ctx);
    Py_XDECREF(null_ctx);
    Py_XDECREF(monitor);
  }
};

GPUMON_HOT PyObject* step(PyObject* self, PyObject* /*unused*/) {
  auto* s = static_cast<StepCall*>(PyCapsule_GetPointer(self, kCallCapsule));
  if (s == nullptr) return nullptr;
  if (!s->clock->active()) return Py_NewRef(s->null_ctx);
  run(*s->clock, s->monitor, [](client::StepClock& c) { c.step_deferred(); });
  return Py_NewRef(s->ctx);
}

PyMethodDef kStepDef = {
    "step", step, METH_NOARGS,
    "Marks the end of a step (plain call) or, as `with mon.step():`, times its body."};

// ---- the zero-code hooks' data wait (gpumon/_auto.py) ----

// The hooks time a batch themselves (the loader's iterator keeps its identity, so no TimedIter)
// and hand the seconds over here: a pybind11 method would cost a cold step microseconds.
GPUMON_HOT PyObject* add_wait(PyObject* self, PyObject* seconds_obj) {
  auto* s = static_cast<StepCall*>(PyCapsule_GetPointer(self, kCallCapsule));
  if (s == nullptr) return nullptr;
  const double seconds = PyFloat_AsDouble(seconds_obj);
  if (seconds == -1.0 && PyErr_Occurred() != nullptr) return nullptr;  // not a number: TypeError
  if (s->clock->active())
    run(*s->clock, s->monitor, [seconds](client::StepClock& c) { c.add_data_wait(seconds); });
  Py_RETURN_NONE;
}

PyMethodDef kWaitDef = {"add_wait", add_wait, METH_O,
                        "Adds seconds of data wait to the step in progress."};

// ---- the objects the calls make: TimedIter and StepScope ----

// One layout for both: the clock (held), the Monitor (weakly) and, for a TimedIter, the
// loader's iterator (nullptr in a StepScope).
struct ClockObject {
  PyObject ob_base;  // PyObject_HEAD
  PyObject* clock_obj;
  PyStepClock* clock;
  PyObject* monitor;  // weakref.ref
  PyObject* inner;
};

ClockObject* as_clock_object(PyObject* self) {
  return reinterpret_cast<ClockObject*>(self);
}

int clock_object_traverse(PyObject* self, visitproc visit, void* arg) {
  Py_VISIT(Py_TYPE(self));
  Py_VISIT(as_clock_object(self)->clock_obj);
  Py_VISIT(as_clock_object(self)->monitor);
  Py_VISIT(as_clock_object(self)->inner);
  return 0;
}

int clock_object_clear(PyObject* self) {
  ClockObject* o = as_clock_object(self);
  o->clock = nullptr;
  Py_CLEAR(o->clock_obj);
  Py_CLEAR(o->monitor);
  Py_CLEAR(o->inner);
  return 0;
}

void clock_object_dealloc(PyObject* self) {
  PyTypeObject* type = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  clock_object_clear(self);
  type->tp_free(self);
  Py_DECREF(type);
}

// The type of `spec`, whose slots name the three functions above.
PyTypeObject* clock_object_type(PyType_Spec& spec) {
  auto* type = reinterpret_cast<PyTypeObject*>(PyType_FromSpec(&spec));
  if (type == nullptr) throw py::error_already_set();
  return type;
}

py::object new_clock_object(PyTypeObject* type, const py::object& clock, const py::object& monitor,
                            const py::object& inner) {
  PyStepClock* c = clock_of(clock);
  require_weakref(monitor);
  ClockObject* o = PyObject_GC_New(ClockObject, type);
  if (o == nullptr) throw py::error_already_set();
  o->clock_obj = clock.inc_ref().ptr();
  o->clock = c;
  o->monitor = monitor.inc_ref().ptr();
  o->inner = inner ? inner.inc_ref().ptr() : nullptr;
  PyObject_GC_Track(reinterpret_cast<PyObject*>(o));
  return py::reinterpret_steal<py::object>(reinterpret_cast<PyObject*>(o));
}

constexpr unsigned long kClockObjectFlags =
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_DISALLOW_INSTANTIATION;

// ---- mon.wrap(loader) ----

GPUMON_HOT PyObject* timed_next(PyObject* self) {
  ClockObject* it = as_clock_object(self);
  if (it->inner == nullptr) return nullptr;  // cleared: exhausted
  PyStepClock* clock = it->clock;
  bool timing = clock != nullptr && clock->active();
  if (timing) {
    run(*clock, it->monitor, [](client::StepClock& c) { c.fetch_begin(); });
    timing = clock->active();  // off after an internal error: just iterate
  }
  PyObject* batch = PyIter_Next(it->inner);  // the loader's errors pass through untouched
  if (batch != nullptr && timing) clock->clock().fetch_end();
  return batch;
}

PyType_Slot kTimedSlots[] = {
    {Py_tp_doc, const_cast<char*>("mon.wrap(loader)'s iterator: times the wait for each batch.")},
    {Py_tp_dealloc, reinterpret_cast<void*>(&clock_object_dealloc)},
    {Py_tp_traverse, reinterpret_cast<void*>(&clock_object_traverse)},
    {Py_tp_clear, reinterpret_cast<void*>(&clock_object_clear)},
    {Py_tp_iter, reinterpret_cast<void*>(&PyObject_SelfIter)},
    {Py_tp_iternext, reinterpret_cast<void*>(&timed_next)},
    {0, nullptr},
};

PyType_Spec kTimedSpec = {"gpumon._gpumon.TimedIter", sizeof(ClockObject), 0, kClockObjectFlags,
                          kTimedSlots};

// ---- `with mon.step():` ----

GPUMON_HOT PyObject* scope_enter(PyObject* self, PyObject* /*unused*/) {
  ClockObject* s = as_clock_object(self);
  if (s->clock != nullptr && s->clock->active() &&
      !guarded([&] { s->clock->clock().begin_scoped(); }))  // step() was the start: not a boundary
    fail(*s->clock, s->monitor);
  Py_RETURN_NONE;
}

// monitor._on_error(exc) for an exception leaving the body (it writes the OOM bundle of a CUDA
// OOM). What that raises is reported as unraisable: the body's own exception goes on.
void report_body_error(PyObject* monitor_ref, PyObject* exc) {
  if (!call_monitor(monitor_ref, "_on_error", exc)) PyErr_WriteUnraisable(monitor_ref);
}

GPUMON_HOT PyObject* scope_exit(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 3) {
    PyErr_SetString(PyExc_TypeError, "__exit__(exc_type, exc, traceback)");
    return nullptr;
  }
  ClockObject* s = as_clock_object(self);
  if (s->clock == nullptr) Py_RETURN_FALSE;
  if (args[1] != Py_None && s->clock->active()) report_body_error(s->monitor, args[1]);
  if (s->clock->active()) run(*s->clock, s->monitor, [](client::StepClock& c) { c.end_scoped(); });
  Py_RETURN_FALSE;
}

PyMethodDef kScopeMethods[] = {
    {"__enter__", scope_enter, METH_NOARGS, "Starts the timed body of a step."},
    {"__exit__", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&scope_exit)),
     METH_FASTCALL, "Ends it; reports a CUDA OOM leaving the body; never swallows an error."},
    {nullptr, nullptr, 0, nullptr},
};

PyType_Slot kScopeSlots[] = {
    {Py_tp_doc, const_cast<char*>("What mon.step() returns: `with mon.step():` times the body.")},
    {Py_tp_dealloc, reinterpret_cast<void*>(&clock_object_dealloc)},
    {Py_tp_traverse, reinterpret_cast<void*>(&clock_object_traverse)},
    {Py_tp_clear, reinterpret_cast<void*>(&clock_object_clear)},
    {Py_tp_methods, kScopeMethods},
    {0, nullptr},
};

PyType_Spec kScopeSpec = {"gpumon._gpumon.StepScope", sizeof(ClockObject), 0, kClockObjectFlags,
                          kScopeSlots};

// The C function `def` over a StepCall, which a capsule owns and the function holds.
py::object call_over(PyMethodDef& def, const py::object& clock, const py::object& ctx,
                     const py::object& null_ctx, const py::object& monitor) {
  PyStepClock* c = clock_of(clock);
  require_weakref(monitor);
  auto call = std::make_unique<StepCall>(clock, c, ctx, null_ctx, monitor);
  PyObject* capsule = PyCapsule_New(call.get(), kCallCapsule, [](PyObject* cap) {
    delete static_cast<StepCall*>(PyCapsule_GetPointer(cap, kCallCapsule));
  });
  if (capsule == nullptr) throw py::error_already_set();
  call.release();  // the capsule owns it
  py::object owner = py::reinterpret_steal<py::object>(capsule);
  PyObject* fn = PyCFunction_New(&def, capsule);
  if (fn == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(fn);
}

}  // namespace

py::object step_call(const py::object& clock, const py::object& ctx, const py::object& null_ctx,
                     const py::object& monitor) {
  return call_over(kStepDef, clock, ctx, null_ctx, monitor);
}

py::object wait_call(const py::object& clock, const py::object& monitor) {
  return call_over(kWaitDef, clock, py::none(), py::none(), monitor);
}

py::object timed_iter(const py::object& clock, const py::object& iterator,
                      const py::object& monitor) {
  if (!PyIter_Check(iterator.ptr())) throw py::type_error("timed_iter: an iterator expected");
  static PyTypeObject* type = clock_object_type(kTimedSpec);
  return new_clock_object(type, clock, monitor, iterator);
}

py::object step_scope(const py::object& clock, const py::object& monitor) {
  static PyTypeObject* type = clock_object_type(kScopeSpec);
  return new_clock_object(type, clock, monitor, py::object());
}

}  // namespace gpumon::python
