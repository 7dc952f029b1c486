#!/usr/bin/env bash
# `gpumon query` against the real nvidia-smi, field by field, idle and beside a busy PyTorch
# process (tools/device/compare_with_nvidia_smi.py: static fields identical, dynamic ones within
# a stated tolerance), on the one-H200 machine in about 2 minutes. Results: $OUT/results.tgz
# (r/compare-{idle,busy}.{md,json}, r/log.txt). The tables hold the board's UUID and serial:
# summarise them, do not commit them. DEVDEPS: see build_env.sh (carry .devdeps).
set -uo pipefail
DEVDEPS=${DEVDEPS:-$PWD/.devdeps}
. tools/device/build_env.sh
device_results /tmp/gpumon-query-fields
log "build"
gpumon_build /tmp/gpumon-build -- gpumon || exit 1
g=/tmp/gpumon-build/gpumon
log "compare idle"
python3 tools/device/compare_with_nvidia_smi.py --gpumon "$g" --label idle --out "$res" 2>&1 | tee -a "$res/log.txt"
python3 tools/device/busy_gpu.py 60 &
busy=$!
sleep 8
log "compare beside a busy PyTorch process"
python3 tools/device/compare_with_nvidia_smi.py --gpumon "$g" --label busy --out "$res" 2>&1 | tee -a "$res/log.txt"
kill "$busy" 2>/dev/null; wait "$busy" 2>/dev/null
log "done in ${SECONDS} s"
