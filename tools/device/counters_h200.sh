#!/usr/bin/env bash
# The clock-event time counters (nvidia-smi's "Clocks Event Reasons Counters") on the real
# H200: the --query-gpu fields and the -q lines byte for byte against nvidia-smi while the GPU
# idles (the counters stand still), then under dense bf16 GEMMs (the H200 sits at its power cap,
# so SW Power Capping grows): gpumon, nvidia-smi, gpumon read in turn, where nvidia-smi's value
# must lie between gpumon's two, and a recording's counters over 6 s.
# Results: $OUT/results.tgz (r/log.txt, r/compare.txt). DEVDEPS: see build_env.sh.
set -uo pipefail
DEVDEPS=${DEVDEPS:-$PWD/.devdeps}
. tools/device/build_env.sh
device_results /tmp/gpumon-counters
log "build"
gpumon_build /tmp/gpumon-build -- gpumon || exit 1
g=/tmp/gpumon-build/gpumon
fields=clocks_event_reasons_counters.sw_power_cap,clocks_event_reasons_counters.sync_boost,clocks_event_reasons_counters.sw_thermal_slowdown,clocks_event_reasons_counters.hw_thermal_slowdown,clocks_event_reasons_counters.hw_power_brake_slowdown
{
  echo "== idle"
  for fmt in csv csv,noheader,nounits; do
    nvidia-smi --query-gpu=$fields --format=$fmt >"$res/smi.txt" 2>&1
    "$g" query --query-gpu=$fields --format=$fmt >"$res/ours.txt" 2>&1
    cat "$res/smi.txt"
    same "--format=$fmt" "$res/smi.txt" "$res/ours.txt"
  done
  nvidia-smi -q -d PERFORMANCE | sed -n '/Counters/,/HW Power Braking/p' >"$res/smi.txt"
  "$g" -q -d PERFORMANCE | sed -n '/Counters/,/HW Power Braking/p' >"$res/ours.txt"
  cat "$res/smi.txt"
  same "-q -d PERFORMANCE counters" "$res/smi.txt" "$res/ours.txt"
} >>"$res/compare.txt" 2>&1
python3 tools/device/busy_gpu.py 30 >/dev/null 2>&1 &
busy=$!
sleep 8
{
  echo "== busy: gpumon, nvidia-smi, gpumon (sw_power_cap us; nvidia-smi's must lie between)"
  for k in 1 2 3; do
    a=$("$g" query --query-gpu=$fields --format=csv,noheader,nounits | cut -d, -f1)
    b=$(nvidia-smi --query-gpu=$fields --format=csv,noheader,nounits | cut -d, -f1)
    c=$("$g" query --query-gpu=$fields --format=csv,noheader,nounits | cut -d, -f1)
    if [ "$a" -le "$b" ] && [ "$b" -le "$c" ]; then v=BETWEEN; else v=OUTSIDE; fi
    echo "$a $b $c $v"
    sleep 1
  done
  nvidia-smi --query-gpu=clocks_event_reasons.sw_power_cap,power.draw,power.limit --format=csv
} >>"$res/compare.txt" 2>&1
# The machine has no libmicrohttpd, so serve is not built: `gpumon record` samples with the
# sampler's defaults (the counters once a second) and `gpumon export` prints the recording.
rm -f /tmp/busy.gpumon
timeout -s INT 6 "$g" record -o /tmp/busy.gpumon --interval 500 --no-diagnose \
  >"$res/record.txt" 2>&1
log "record exited $?"
{
  echo "== recorded under load (the counter's growth per second is the share of time capped)"
  "$g" export /tmp/busy.gpumon --format csv \
    --metrics clock_event_sw_power_cap_s,clock_event_sync_boost_s,clock_event_sw_thermal_s,clock_event_hw_thermal_s,clock_event_hw_power_brake_s,power_draw_w
} >>"$res/compare.txt" 2>&1
wait "$busy"
cat "$res/compare.txt"
log "done in ${SECONDS} s"
