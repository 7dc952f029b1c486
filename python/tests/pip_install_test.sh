#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The pip install of docs/install.md, offline (--no-index --no-build-isolation), into a fresh venv:
# an sdist made from a copy of the repository (the build leaves nothing in the checkout) must
# carry what the CMake build reads, and pip installs from it, the gpumon executable brought up
# to date in BUILD_DIR (GPUMON_CMAKE_BUILD_DIR; a build from scratch is the same step, minutes
# longer). Then, from outside the repository, with no gpumon on PATH: the `gpumon` command pip
# put in the venv's bin/, `gpumon record -- python -c ...` recording `import gpumon` steps, and
# the module starting its agent from the executable of its own install.
# usage: pip_install_test.sh PYTHON BUILD_DIR FAKE_NVML   (exit 77: skipped)
set -euo pipefail
python=$1 build=$2 fake_nvml=$3
repo=$(cd "$(dirname "$0")/../.." && pwd)
if ! "$python" -c 'import setuptools, pybind11, venv, pip' 2>/dev/null; then
  echo "SKIP: $python lacks venv, pip, pybind11 or setuptools" \
    "(apt-get install python3-venv python3-pip python3-pybind11 python3-setuptools)"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/repo/web/node_modules" "$tmp/repo/testdata"
for part in src include python cmake examples deploy CMakeLists.txt CMakePresets.json README.md \
    MANIFEST.in pyproject.toml setup.py; do
  cp -r "$repo/$part" "$tmp/repo/$part"
done
cp -r "$repo/testdata/scenarios" "$tmp/repo/testdata/"
find "$repo/web" -maxdepth 1 -mindepth 1 ! -name node_modules -exec cp -r {} "$tmp/repo/web/" \;
[ ! -d "$repo/web/node_modules/uplot" ] || cp -r "$repo/web/node_modules/uplot" "$tmp/repo/web/node_modules/"
rm -rf "$tmp/repo/build-pip" "$tmp/repo/python/gpumon"/_gpumon*.so

(cd "$tmp/repo" && "$python" setup.py -q sdist -d "$tmp/dist" >"$tmp/sdist.log" 2>&1) ||
  { cat "$tmp/sdist.log"; echo "FAIL: setup.py sdist"; exit 1; }
sdist=$(ls "$tmp"/dist/gpumon-*.tar.gz)
contents=$(tar tzf "$sdist")
for need in CMakeLists.txt cmake/Packaging.cmake src/cli/main.cc include/gpumon/monitor.h \
    web/CMakeLists.txt testdata/scenarios/demo.json examples/cpp/CMakeLists.txt \
    deploy/gpumon.service python/gpumon/_cli.py; do
  grep -q "^gpumon-[^/]*/$need\$" <<<"$contents" || { echo "FAIL: the sdist lacks $need"; exit 1; }
done
! grep -qE '/build-pip/|\.so$|/__pycache__/' <<<"$contents" || { echo "FAIL: build output in the sdist"; exit 1; }
echo "ok: $(basename "$sdist") carries the CMake build's sources"

# Without its own pip (ensurepip is slow): the system's pip, seen through the system packages.
"$python" -m venv --system-site-packages --without-pip "$tmp/venv"
GPUMON_BUILD_JOBS=2 GPUMON_CMAKE_BUILD_DIR="$build" "$tmp/venv/bin/python" -m pip install -q \
  --no-index --no-build-isolation --disable-pip-version-check "$sdist"
[ -x "$tmp/venv/bin/gpumon" ] || { echo "FAIL: no gpumon command in the venv's bin/"; exit 1; }

mkdir -p "$tmp/run"
cd "$tmp/run"
# No gpumon on PATH: what runs is the install's own.
run() {
  env -u PYTHONPATH -u GPUMON_BINARY -u GPUMON_AGENT_SOCKET PATH="/usr/bin:/bin" \
    XDG_RUNTIME_DIR="$tmp/run" GPUMON_NVML_LIBRARY="$fake_nvml" GPUMON_FAKE_SCENARIO=demo \
    GPUMON_AGENT_IDLE_EXIT_S=1 "$@"
}
version=$(run "$tmp/venv/bin/gpumon" --version)
case $version in "gpumon "*) echo "ok: $version" ;; *) echo "FAIL: --version said '$version'"; exit 1 ;; esac
run "$tmp/venv/bin/gpumon" query -L | grep -q "^GPU 0: " || { echo "FAIL: gpumon query -L"; exit 1; }

# gpumon record -- python: the steps of `import gpumon` land in the recording.
run "$tmp/venv/bin/gpumon" record -o "$tmp/run/steps.gpumon" --interval 200 -- \
  "$tmp/venv/bin/python" -c 'import gpumon
mon = gpumon.start()
for _ in range(6):
    mon.step()
mon.close()'
steps=$(run "$tmp/venv/bin/gpumon" export "$tmp/run/steps.gpumon" --table steps --format jsonl | wc -l)
[ "$steps" -ge 5 ] || { echo "FAIL: $steps steps recorded, 5 expected"; exit 1; }
echo "ok: gpumon record -- python recorded $steps steps"

run "$tmp/venv/bin/python" - "$tmp/venv" <<'PY'
import sys, warnings
import gpumon, gpumon._gpumon
from gpumon import _cli, _monitor
warnings.simplefilter("error", gpumon.GpumonWarning)  # any of them fails the test
assert gpumon.__file__.startswith(sys.argv[1]), gpumon.__file__
assert gpumon._gpumon.__file__.startswith(sys.argv[1]), gpumon._gpumon.__file__
assert _monitor._find_binary() == _cli.installed_binary(), _monitor._find_binary()
assert _cli.installed_binary().startswith(sys.argv[1]), _cli.installed_binary()
mon = gpumon.start()  # starts `gpumon agent` from the install's own executable
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
