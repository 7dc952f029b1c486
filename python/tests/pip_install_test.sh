#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `pip install --no-build-isolation ./python` into a fresh venv, offline (--no-index), from a
# copy of the repository's python/ and src/ (the build leaves nothing in the checkout); then,
# from outside the repository, import gpumon._gpumon and run a few steps against an agent that
# the installed package starts from the `gpumon` binary it finds on PATH.
# usage: pip_install_test.sh PYTHON GPUMON_BINARY FAKE_NVML   (exit 77: skipped)
set -euo pipefail
python=$1 binary=$2 fake_nvml=$3
repo=$(cd "$(dirname "$0")/../.." && pwd)
if ! "$python" -c 'import setuptools, pybind11, venv, pip' 2>/dev/null; then
  echo "SKIP: $python lacks venv, pip, pybind11 or setuptools" \
    "(apt-get install python3-venv python3-pip python3-pybind11 python3-setuptools)"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/repo"
cp -r "$repo/src" "$tmp/repo/src"
cp -r "$repo/include" "$tmp/repo/include"
cp -r "$repo/python" "$tmp/repo/python"
rm -rf "$tmp/repo/python/build" "$tmp/repo/python"/*.egg-info "$tmp/repo/python/gpumon"/_gpumon*.so

# Without its own pip (ensurepip is slow): the system's pip, seen through the system packages.
"$python" -m venv --system-site-packages --without-pip "$tmp/venv"
GPUMON_BUILD_JOBS=2 "$tmp/venv/bin/python" -m pip install -q --no-index --no-build-isolation \
  --disable-pip-version-check "$tmp/repo/python"

mkdir -p "$tmp/bin" "$tmp/run"
ln -s "$binary" "$tmp/bin/gpumon"
cd "$tmp/run"
env -u PYTHONPATH -u GPUMON_BINARY -u GPUMON_AGENT_SOCKET PATH="$tmp/bin:/usr/bin:/bin" \
  XDG_RUNTIME_DIR="$tmp/run" GPUMON_NVML_LIBRARY="$fake_nvml" GPUMON_FAKE_SCENARIO=demo \
  GPUMON_AGENT_IDLE_EXIT_S=1 "$tmp/venv/bin/python" - "$tmp/venv" <<'PY'
import sys, warnings
import gpumon, gpumon._gpumon
warnings.simplefilter("error", gpumon.GpumonWarning)  # any of them fails the test
assert gpumon.__file__.startswith(sys.argv[1]), gpumon.__file__
assert gpumon._gpumon.__file__.startswith(sys.argv[1]), gpumon._gpumon.__file__
mon = gpumon.start()  # starts `gpumon agent` from PATH
assert mon.active
for _ in range(5):  # the last one is sent at close()
    mon.step()
mon.flush()  # steps are written at most every 200 ms; write them now
sent = mon.stats()["sent"]
mon.close()
assert sent >= 3, sent
print("installed gpumon at", gpumon.__file__, "sent", sent, "messages")
PY

# The .pth sets the zero-code hooks up at start-up only when GPUMON_PYTHON_HOOKS=1.
hooks() {
  env -u PYTHONPATH "$@" "$tmp/venv/bin/python" -c \
    'import sys, torch; print("gpumon._auto" in sys.modules and sys.modules["gpumon._auto"]._installed)'
}
if "$tmp/venv/bin/python" -c 'import torch' 2>/dev/null; then
  [ "$(hooks GPUMON_PYTHON_HOOKS=1)" = True ] || { echo "FAIL: the .pth did not set the hooks up"; exit 1; }
  [ "$(hooks GPUMON_PYTHON_HOOKS=0)" = False ] || { echo "FAIL: the hooks came unasked"; exit 1; }
  echo "ok: GPUMON_PYTHON_HOOKS=1 sets the hooks up"
fi
