#!/usr/bin/env bash
# The OOM guard and the adaptive loader on the H200 (issue: GPU validation), one part per call:
#   control_h200.sh guard     build; real CUDA OOMs split and retried against a reference run
#                             (control_h200.py oom), the predicted split and the merge beside a
#                             neighbour that ramps (predict), the guard in Lightning
#   control_h200.sh overhead  build; the guard's cost with no OOM on a ~1.3 ms and a ~54 ms
#                             step (bench/oom_guard_overhead.py --device cuda)
#   control_h200.sh more      build; predict again with less memory left, the guard in
#                             Lightning and the Hugging Face Trainer, and the adaptive loader
#                             feeding the GPU from a CPU-heavy Dataset
# Each run is recorded (gpumon record, 10 Hz) and judged by gpumon doctor. Results go to
# $OUT/results.tgz. DEVDEPS: see build_env.sh (carry .devdeps).
set -uo pipefail
part=${1:-guard}
out=${OUT:-/tmp/gpumon-control}; mkdir -p "$out/r"
res="$out/r"
src=$(pwd)
log() { echo "[$(date +%T)] $*" | tee -a "$res/log.txt"; }
finish() { tar -czf "$out/results.tgz" -C "$out" r; }
trap finish EXIT
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1

bdir=/tmp/gpumon-build
DEVDEPS=${DEVDEPS:-$src/.devdeps}
. "$src/tools/device/build_env.sh"
log "build ($part)"
gpumon_build "$bdir" --python -- gpumon gpumon_python || exit 1
g=$bdir/gpumon
export PYTHONPATH="$src/python" GPUMON_BINARY="$g" GPUMON_PYTHON_DIR="$src/python" PYTHONUNBUFFERED=1
python3 -c "import gpumon._gpumon" 2>>"$res/log.txt" || log "WARNING: _gpumon does not import"
nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv >"$res/gpu.txt" 2>&1
pip list 2>/dev/null | grep -i -E "^(torch|lightning|pytorch-lightning|transformers|accelerate) " >"$res/versions.txt"

# rec NAME SECONDS ARGS...: control_h200.py ARGS under `gpumon record`, then gpumon doctor.
rec() {
  local name=$1 limit=$2; shift 2
  log "run $name"
  timeout "$limit" "$g" record -o "$res/$name.gpumon" --interval 100 -- \
    python3 tools/device/control_h200.py "$@" --out "$res/$name.json" >"$res/$name.txt" 2>&1
  log "  $name: exit $? $(head -c 600 "$res/$name.json" 2>/dev/null)"
  "$g" doctor "$res/$name.gpumon" >"$res/$name.doctor.txt" 2>&1
  "$g" doctor "$res/$name.gpumon" --json >"$res/$name.doctor.json" 2>&1
  log "  $name doctor: $(grep -E -i 'oom_guard|loader_|guard|loader' "$res/$name.doctor.txt" | head -5 | tr '\n' ' ')"
}
overhead() {
  local name=$1; shift
  log "overhead $name"
  timeout 240 python3 bench/oom_guard_overhead.py --device cuda --out "$res/overhead-$name.json" "$@" \
    >"$res/overhead-$name.txt" 2>&1
  log "  $name: exit $? $(tail -c 700 "$res/overhead-$name.txt" | tr '\n' ' ')"
}

if [ "$part" = guard ]; then
  rec oom 150 oom --leave-gib 12
  rec predict 120 predict --leave-gib 24 --ramp-to-gib 12 --seconds 50 --hysteresis 20
  rec lightning 150 lightning --leave-gib 12
elif [ "$part" = overhead ]; then
  overhead small --width 2048 --batch 512 --blocks 20
  overhead large --width 8192 --batch 4096 --blocks 10 --steps 50
elif [ "$part" = more ]; then
  # The second call: a ramp to 11 GiB free (12 left the guard its margin: rightly no split),
  # Lightning and HF with 8 GiB free (12 fit a batch of 16384 without momentum), the loader.
  rec predict 120 predict --leave-gib 24 --ramp-to-gib 11 --seconds 50 --hysteresis 20
  rec lightning 120 lightning --leave-gib 8
  rec hf 150 hf --leave-gib 8
  rec loader 150 loader
fi
log done
