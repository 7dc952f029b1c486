#!/usr/bin/env bash
# The main job: set up, build, and open gpumon's live view of this machine's GPUs. Where no
# NVIDIA driver is present it shows simulated GPUs (gpumon's fake NVML, scenario "demo"), and
# says so on screen. Extra arguments go to `gpumon watch` (e.g. --interval 0.5).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --build-only
scripts/build.sh dev
# Ask gpumon itself whether this machine's NVML works (the ldconfig cache can miss a driver
# mounted into a container); if not, say why and show simulated GPUs instead.
if [ -z "${GPUMON_NVML_LIBRARY:-}" ] && ! why=$(build/gpumon query --query-gpu=count --format=csv,noheader 2>&1 >/dev/null); then
  echo "${why:-gpumon: no NVIDIA driver found}" >&2
  echo "Showing SIMULATED GPUs instead (scenario ${GPUMON_FAKE_SCENARIO:-demo}); press q to quit." >&2
  sleep 2
  export GPUMON_NVML_LIBRARY="$PWD/build/fake-nvml/libnvidia-ml.so.1"
  export GPUMON_FAKE_SCENARIO="${GPUMON_FAKE_SCENARIO:-demo}"
fi
exec build/gpumon watch "$@"
