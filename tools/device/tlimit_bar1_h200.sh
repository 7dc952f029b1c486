#!/usr/bin/env bash
# The T.Limit margin and thresholds and BAR1 on the real H200, against nvidia-smi: the
# temperature.gpu.tlimit field (CSV, with and without units), -q -d TEMPERATURE and -d MEMORY
# (the T.Limit and BAR1 lines byte for byte) and dmon -s m (its bar1 column), idle and while the
# GPU runs dense GEMMs (the margin shrinks as it warms).
# Results: $OUT/results.tgz (r/log.txt, r/compare.txt). DEVDEPS: see build_env.sh.
set -uo pipefail
DEVDEPS=${DEVDEPS:-$PWD/.devdeps}
. tools/device/build_env.sh
device_results /tmp/gpumon-tlimit
log "build"
gpumon_build /tmp/gpumon-build -- gpumon || exit 1
g=/tmp/gpumon-build/gpumon
compare() {  # label
  echo "== $1"
  for fmt in csv csv,noheader,nounits; do
    nvidia-smi --query-gpu=temperature.gpu,temperature.gpu.tlimit --format=$fmt >"$res/smi.txt" 2>&1
    "$g" query --query-gpu=temperature.gpu,temperature.gpu.tlimit --format=$fmt >"$res/ours.txt" 2>&1
    cat "$res/smi.txt"
    same "tlimit --format=$fmt" "$res/smi.txt" "$res/ours.txt"
  done
  nvidia-smi -q -d TEMPERATURE | grep -E 'T.Limit' >"$res/smi.txt"
  "$g" -q -d TEMPERATURE | grep -E 'T.Limit' >"$res/ours.txt"
  cat "$res/smi.txt"
  same "-q -d TEMPERATURE T.Limit lines" "$res/smi.txt" "$res/ours.txt"
  nvidia-smi -q -d MEMORY | sed -n '/BAR1/,/Free/p' >"$res/smi.txt"
  "$g" -q -d MEMORY | sed -n '/BAR1/,/Free/p' >"$res/ours.txt"
  cat "$res/smi.txt"
  same "-q -d MEMORY BAR1 lines" "$res/smi.txt" "$res/ours.txt"
  nvidia-smi dmon -s m -c 1 >"$res/smi.txt" 2>&1
  "$g" dmon -s m -c 1 >"$res/ours.txt" 2>&1
  cat "$res/smi.txt"
  same "dmon -s m (fb bar1 ccpm; ccpm is '-' in gpumon)" "$res/smi.txt" "$res/ours.txt"
}
compare idle >>"$res/compare.txt" 2>&1
python3 tools/device/busy_gpu.py 25 >/dev/null 2>&1 &
busy=$!
sleep 15
compare "busy (15 s of GEMMs; the two tools read moments apart, so the margin may differ by 1)" \
  >>"$res/compare.txt" 2>&1
wait "$busy"
cat "$res/compare.txt"
log "done in ${SECONDS} s"
