#!/usr/bin/env bash
# The board's identity on the real H200: nvidia-smi's --query-gpu fields gpumon added with it
# (ecc.mode.pending, pci.sub_device_id, pci.baseClass, pci.subClass, accounting.buffer_size,
# inforom.oem/ecc/pwr, addressing_mode, platform.module_id), each alone in csv and
# csv,noheader,nounits, captured in the form of testdata/nvidia-smi/h200/modes/field-F.txt and
# compared byte for byte with gpumon's; then `-q` whole, compared line by line by compare_q.py
# (the lines gpumon leaves N/A listed). About a minute after the build. Results:
# $OUT/results.tgz (r/modes/field-*.txt, r/q-*.txt, r/compare.txt, r/log.txt; UUID, serial and
# PDI redacted). DEVDEPS: see build_env.sh (carry
# .devdeps, made by make_devdeps.sh).
set -uo pipefail
DEVDEPS=${DEVDEPS:-$PWD/.devdeps}
. tools/device/build_env.sh
device_results /tmp/gpumon-identity
log "build"
gpumon_build /tmp/gpumon-build -- gpumon || exit 1
g=/tmp/gpumon-build/gpumon

# capture NAME TOOL ARGS...: TOOL's output and exit status, as the modes/ captures hold them.
capture() {
  local name=$1 tool=$2
  shift 2
  { "$tool" "$@" 2>&1; echo "rc=$?"; } | redact >"$name"
}

mkdir -p "$res/modes" "$res/gpumon"
fields=(ecc.mode.pending pci.sub_device_id pci.baseClass pci.subClass accounting.buffer_size
  inforom.oem inforom.ecc inforom.pwr inforom.power addressing_mode platform.module_id)
same=0
for f in "${fields[@]}"; do
  for mode in "" -nounits; do
    fmt=csv
    [ -n "$mode" ] && fmt=csv,noheader,nounits
    capture "$res/modes/field-$f$mode.txt" nvidia-smi --query-gpu="$f" --format=$fmt
    capture "$res/gpumon/field-$f$mode.txt" "$g" query --query-gpu="$f" --format=$fmt
    if cmp -s "$res/modes/field-$f$mode.txt" "$res/gpumon/field-$f$mode.txt"; then
      same=$((same + 1))
    else
      { echo "== $f $fmt differs"; diff "$res/modes/field-$f$mode.txt" \
          "$res/gpumon/field-$f$mode.txt"; } >>"$res/compare.txt"
    fi
  done
done
echo "== fields: $same of $((2 * ${#fields[@]})) captures identical" >>"$res/compare.txt"

nvidia-smi -q 2>&1 | redact >"$res/q-whole-nvidia-smi.txt"
"$g" -q 2>"$res/q-whole-gpumon.err" | redact >"$res/q-whole-gpumon.txt"
{ echo "== -q whole"; python3 tools/device/compare_q.py "$res/q-whole-gpumon.txt" \
    "$res/q-whole-nvidia-smi.txt"; } >>"$res/compare.txt"
cat "$res/compare.txt"
log "done in ${SECONDS} s"
