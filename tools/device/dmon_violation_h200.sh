#!/usr/bin/env bash
# dmon's violation columns (-s v: pviol %, tviol bool) on the real H200, nvidia-smi's and
# gpumon's side by side: idle, then while dense bf16 GEMMs hold the GPU at its power cap (both
# tools run at once, 6 lines each), with the power-cap counter read before and after.
# Results: $OUT/results.tgz (r/dmon.txt, r/log.txt). DEVDEPS: see build_env.sh.
set -uo pipefail
DEVDEPS=${DEVDEPS:-$PWD/.devdeps}
. tools/device/build_env.sh
device_results /tmp/gpumon-dmon-violation
log "build"
gpumon_build /tmp/gpumon-build -- gpumon || exit 1
g=/tmp/gpumon-build/gpumon
counter() { nvidia-smi --query-gpu=clocks_event_reasons_counters.sw_power_cap --format=csv,noheader; }
{
  echo "== idle: nvidia-smi, then gpumon: dmon -s v -c 3"
  nvidia-smi dmon -s v -c 3
  "$g" dmon -s v -c 3
  python3 tools/device/busy_gpu.py 30 >/dev/null 2>&1 &
  busy=$!
  sleep 8
  echo "== busy: counter; nvidia-smi and gpumon dmon -s pv -c 6 at once; counter"
  counter
  "$g" dmon -s pv -c 6 >"$res/ours.txt" 2>&1 &
  ours=$!
  nvidia-smi dmon -s pv -c 6
  wait "$ours"
  echo "-- gpumon"
  cat "$res/ours.txt"
  counter
  echo "== busy: nvidia-smi and gpumon dmon -s v -d 2 -c 4 at once"
  "$g" dmon -s v -d 2 -c 4 >"$res/ours.txt" 2>&1 &
  ours=$!
  nvidia-smi dmon -s v -d 2 -c 4
  wait "$ours"
  echo "-- gpumon"
  cat "$res/ours.txt"
  wait "$busy"
} >"$res/dmon.txt" 2>&1
cat "$res/dmon.txt"
log "done in ${SECONDS} s"
