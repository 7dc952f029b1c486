#!/usr/bin/env bash
# `gpumon -q` against `nvidia-smi -q` on the real H200, whole and with each -d section, idle and
# beside a busy PyTorch process; `--query-gpu=display_mode` and the other fields added with it.
# Each pair is taken back to back and compared by compare_q.py (layout line by line, every value
# gpumon reads). About a minute after the build. Results: $OUT/results.tgz (r/q-*.txt,
# r/compare.txt, r/log.txt; UUID, serial and PDI redacted). DEVDEPS: see build_env.sh (carry
# .devdeps, made by make_devdeps.sh).
set -uo pipefail
DEVDEPS=${DEVDEPS:-$PWD/.devdeps}
. tools/device/build_env.sh
device_results /tmp/gpumon-q
log "build"
gpumon_build /tmp/gpumon-build -- gpumon || exit 1
g=/tmp/gpumon-build/gpumon


pair() {  # pair NAME ARGS...: nvidia-smi -q ARGS, then gpumon -q ARGS, compared
  local name=$1
  shift
  nvidia-smi -q "$@" 2>&1 | redact >"$res/q-$name-nvidia-smi.txt"
  "$g" -q "$@" 2>"$res/q-$name-gpumon.err" | redact >"$res/q-$name-gpumon.txt"
  { echo "== $name ($*)"; python3 tools/device/compare_q.py "$res/q-$name-gpumon.txt" \
      "$res/q-$name-nvidia-smi.txt"; } >>"$res/compare.txt"
}

log "idle"
pair whole
for d in MEMORY UTILIZATION ECC TEMPERATURE POWER CLOCK COMPUTE PIDS PERFORMANCE ROW_REMAPPER; do
  pair "$d" -d "$d"
done
pair MEMORY,UTILIZATION -d MEMORY,UTILIZATION
fields=display_mode,persistence_mode,fan.speed,display_active,accounting.mode
{ echo "== --query-gpu=$fields"
  nvidia-smi --query-gpu=$fields --format=csv
  "$g" query --query-gpu=$fields --format=csv; } >>"$res/compare.txt" 2>&1

python3 tools/device/busy_gpu.py 40 &
busy=$!
sleep 8
log "busy"
pair busy-whole
pair busy-UTILIZATION -d UTILIZATION
pair busy-POWER -d POWER
pair busy-CLOCK -d CLOCK
pair busy-PIDS -d PIDS
kill "$busy" 2>/dev/null; wait "$busy" 2>/dev/null
cat "$res/compare.txt"
log "done in ${SECONDS} s"
