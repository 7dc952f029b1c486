/* SPDX-License-Identifier: MIT */
/* A do-nothing function with the CPython API alone (METH_O), for bench/call_cost/run.sh. */
#include <Python.h>
static PyObject* noop(PyObject* self, PyObject* arg) { Py_RETURN_NONE; }
static PyMethodDef M[] = {{"noop", noop, METH_O, ""}, {0}};
static struct PyModuleDef D = {PyModuleDef_HEAD_INIT, "capi_calls", 0, -1, M};
PyMODINIT_FUNC PyInit_capi_calls(void) { return PyModule_Create(&D); }
