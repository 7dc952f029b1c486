#!/usr/bin/env bash
# The power-limit range and applications clocks (query fields and -q lines) against nvidia-smi
# on the real H200, and which field ids carry the clock-event time counters
# (violation_ids.py), idle and after 40 s of dense bf16 GEMMs (which hold the H200 at its power
# cap). Results: $OUT/results.tgz (r/log.txt, r/compare.txt). DEVDEPS: see build_env.sh.
set -uo pipefail
DEVDEPS=${DEVDEPS:-$PWD/.devdeps}
. tools/device/build_env.sh
device_results /tmp/gpumon-limits
log "build"
gpumon_build /tmp/gpumon-build -- gpumon || exit 1
g=/tmp/gpumon-build/gpumon
fields=power.limit,power.default_limit,power.min_limit,power.max_limit,clocks.applications.graphics,clocks.applications.memory,clocks.default_applications.graphics,clocks.default_applications.memory
{
  for fmt in csv csv,noheader,nounits; do
    echo "== --query-gpu=$fields --format=$fmt"
    nvidia-smi --query-gpu=$fields --format=$fmt
    "$g" query --query-gpu=$fields --format=$fmt
  done
  for d in POWER CLOCK; do
    echo "== -q -d $d: nvidia-smi then gpumon (lines with Limit or Applications)"
    nvidia-smi -q -d $d | grep -E "Power Limit|Applications Clocks|Graphics|Memory  " -A0
    echo "--"
    "$g" -q -d $d | grep -E "Power Limit|Applications Clocks|Graphics|Memory  " -A0
  done
  echo "== idle: counters"
  nvidia-smi -q -d PERFORMANCE | sed -n '/Counters/,/HW Power Braking/p'
  python3 tools/device/violation_ids.py
} >>"$res/compare.txt" 2>&1
python3 tools/device/busy_gpu.py 40 >/dev/null 2>&1
{
  echo "== after 40 s busy: counters"
  nvidia-smi -q -d PERFORMANCE | sed -n '/Counters/,/HW Power Braking/p'
  python3 tools/device/violation_ids.py
} >>"$res/compare.txt" 2>&1
cat "$res/compare.txt"
log "done in ${SECONDS} s"
