#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What a training step's gpumon calls would cost through pybind11 instead of the CPython API:
# builds two tiny modules (a do-nothing function each, and a pybind11 method) and times one call
# of each after a 64 MB sweep has evicted them, as a training step does (median of 400, wall).
# python/src/step_calls.cc is the CPython layer this justifies. usage: bench/call_cost/run.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
py=${PYTHON:-/usr/bin/python3}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
inc=$("$py" -c "import sysconfig; print(sysconfig.get_paths()['include'])")
ext=$("$py" -c "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))")
g++ -O2 -shared -fPIC -std=c++17 -I"$inc" $("$py" -m pybind11 --includes 2>/dev/null || true) \
  "$here/pybind_calls.cc" -o "$out/pybind_calls$ext"
gcc -O2 -shared -fPIC -I"$inc" "$here/capi_calls.c" -o "$out/capi_calls$ext"
cd "$out"
"$py" - <<'PY'
import statistics, sys, time
sys.path.insert(0, ".")
import capi_calls, pybind_calls
sweep = bytearray(64 << 20)
def cold(fn, arg, reps=400):
    ts = []
    for _ in range(reps):
        sweep[::4096] = bytes(len(sweep[::4096]))
        a = time.perf_counter_ns(); fn(arg); b = time.perf_counter_ns()
        ts.append(b - a)
    return statistics.median(ts)
o = pybind_calls.Obj()
for _ in range(3):
    print('{"capi_function_ns": %d, "pybind_function_ns": %d, "pybind_method_ns": %d}' % (
        cold(capi_calls.noop, None), cold(pybind_calls.noop, None), cold(pybind_calls.Obj.step, o)))
PY
