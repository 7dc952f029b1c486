#!/usr/bin/env bash
# Which nvmlDeviceGetFieldValues ids nvidia-smi asks for when it prints -q -d PERFORMANCE's
# "Clocks Event Reasons Counters" (and what the driver answers): an LD_PRELOAD shim
# (smi_field_ids.c) logs them. Settles which ids carry the thermal and power-brake time.
# Results: $OUT/results.tgz (r/ids.txt, r/log.txt). No build of gpumon.
set -uo pipefail
. tools/device/build_env.sh
device_results /tmp/gpumon-smi-field-ids
cc -shared -fPIC -O1 -o /tmp/smi_field_ids.so tools/device/smi_field_ids.c -ldl || exit 1
rm -f /tmp/smi-field-ids.txt
{
  echo "== ldd nvidia-smi | grep nvidia-ml"
  ldd "$(command -v nvidia-smi)" | grep -i nvidia-ml || echo "(not linked: dlopened)"
  echo "== nvidia-smi -q -d PERFORMANCE under the shim"
  LD_PRELOAD=/tmp/smi_field_ids.so nvidia-smi -q -d PERFORMANCE | sed -n '/Counters/,/Braking/p'
  echo "== field ids asked"
  cat /tmp/smi-field-ids.txt 2>/dev/null || echo "(none logged)"
} >"$res/ids.txt" 2>&1
cat "$res/ids.txt"
log "done in ${SECONDS} s"
