#!/usr/bin/env bash
# The main job: set up, build, and open gpumon's live view of this machine's GPUs. Where no
# NVIDIA driver is present it shows simulated GPUs (gpumon's fake NVML, scenario "demo"), and
# says so on screen. Extra arguments go to `gpumon watch` (e.g. --interval 0.5).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --build-only
scripts/build.sh dev
if [ -z "${GPUMON_NVML_LIBRARY:-}" ] && ! ldconfig -p 2>/dev/null | grep -q 'libnvidia-ml\.so\.1'; then
  echo "No NVIDIA driver found: showing SIMULATED GPUs (scenario ${GPUMON_FAKE_SCENARIO:-demo})." >&2
  export GPUMON_NVML_LIBRARY="$PWD/build/fake-nvml/libnvidia-ml.so.1"
  export GPUMON_FAKE_SCENARIO="${GPUMON_FAKE_SCENARIO:-demo}"
fi
exec build/gpumon watch "$@"
