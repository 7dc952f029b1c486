#!/usr/bin/env bash
# gpumon's Python paths on real CUDA, in one device call on the one-H200 machine (under 8 min):
#   1. zero-code instrumentation: examples/train_plain.py (and train_lightning.py, last, as time
#      allows) with their gpumon lines removed (validate_h200.py strip, copies in /tmp), under
#      `gpumon record` beside the instrumented originals: steps and findings compared
#      (zero_code_vs_explicit in summary.json)
#   2. the memory capture: a loop that keeps 64 MiB more CUDA memory each step (validate_h200.py
#      leak) until memory_leak / oom_forecast reach it and the capture has written the
#      memory_summary text and the snapshot pickle (memcap/), then pickle.load and
#      torch.cuda._memory_viz's trace_plot / segment_plot on it (memory-capture.json, memcap-html/)
#   3. crash findings: a run that raises at step 30 (run_failed) and one that SIGKILLs itself
#      at step 30 (validate_h200.py crash), doctor text and JSON of each
#   4. the OOM guard's cost with 53 BatchNorm layers and with none (bench/oom_guard_overhead.py
#      --device cuda --norms 53 / 0, --blocks OVERHEAD_BLOCKS, default 12, to fit the time), and
#      on a ResNet-50 (--model resnet50, batch 64, 224x224, --steps RESNET_STEPS, default 10)
# Recordings: h200-zero-code-{plain,lightning}-{explicit,auto}.gpumon, h200-memory-capture.gpumon,
# h200-crash-exception.gpumon, h200-crash-sigkill.gpumon; each with NAME.txt (its output and the
# recorder's log), NAME.doctor.txt and .doctor.json; all of it summed up in summary.json.
# VALIDATE_PARTS: the parts to run, of "zero-code torchrun memory crash overhead" (default: all
# but torchrun, which runs train_plain.py under `gpumon record -- python -m torch.distributed.run`
# with one rank, stripped and instrumented: h200-zero-code-torchrun-{auto,explicit});
# OVERHEAD_SECONDS: each overhead run's time limit (default 150). Results go to $OUT/results.tgz. Each part's time limit is cut to what is left of
# VALIDATE_SECONDS (default 450, counted from the start, build included).
# DEVDEPS: see build_env.sh (carry .devdeps).
# Dry run without a GPU: VALIDATE_NO_BUILD=1 GPUMON_BINARY=build/gpumon VALIDATE_DEVICE=cpu
# PYTHON=/usr/bin/python3 (with the fake NVML's GPUMON_NVML_LIBRARY and GPUMON_FAKE_SCENARIO).
set -uo pipefail
out=${OUT:-/tmp/gpumon-validate}; mkdir -p "$out/r"
res="$out/r"
src=$(pwd)
py=${PYTHON:-python3}
dev=${VALIDATE_DEVICE:-cuda}
log() { echo "[$(date +%T)] $*" | tee -a "$res/log.txt"; }
finish() { tar -czf "$out/results.tgz" -C "$out" r; }
trap finish EXIT
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
deadline=${VALIDATE_SECONDS:-450}
# lim SECONDS: SECONDS, or less when the deadline is nearer (at least 1).
lim() {
  local l=$((deadline - SECONDS - 5))
  [ "$l" -gt "$1" ] && l=$1
  [ "$l" -lt 1 ] && l=1
  echo "$l"
}

if [ -z "${VALIDATE_NO_BUILD:-}" ]; then
  bdir=/tmp/gpumon-build
  DEVDEPS=${DEVDEPS:-$src/.devdeps}
  . "$src/tools/device/build_env.sh"
  log "build"
  gpumon_build "$bdir" --python -- gpumon gpumon_python || exit 1
  g=$bdir/gpumon
else
  g=$(realpath "${GPUMON_BINARY:?VALIDATE_NO_BUILD needs GPUMON_BINARY}")
fi
log "built in ${SECONDS} s"
export PYTHONPATH="$src/python" GPUMON_BINARY="$g" GPUMON_PYTHON_DIR="$src/python" PYTHONUNBUFFERED=1
"$py" -c "import gpumon._gpumon" 2>>"$res/log.txt" || log "WARNING: _gpumon does not import"
nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv >"$res/gpu.txt" 2>&1
"$py" -m pip list 2>/dev/null | grep -i -E "^(torch|lightning|pytorch-lightning|transformers) " >"$res/versions.txt"
v=tools/device/validate_h200.py
recs=()

# rec NAME SECONDS CMD...: CMD under `gpumon record` (10 Hz) into NAME.gpumon, its output and the
# recorder's log in NAME.txt, then gpumon doctor (text and JSON).
rec() {
  local name=$1 limit; limit=$(lim "$2"); shift 2
  log "run $name (limit ${limit} s)"
  local t0=$SECONDS
  timeout "$limit" "$g" record -o "$res/$name.gpumon" --force --interval 100 -- "$@" >"$res/$name.txt" 2>&1
  local rc=$?
  "$g" doctor "$res/$name.gpumon" >"$res/$name.doctor.txt" 2>&1
  "$g" doctor "$res/$name.gpumon" --json >"$res/$name.doctor.json" 2>&1
  recs+=("$name=$res/$name.gpumon")
  log "  $name: exit $rc in $((SECONDS - t0)) s, steps $("$g" export "$res/$name.gpumon" --table steps --format jsonl 2>/dev/null | wc -l), findings: $(grep -o '"id":"[a-z_]*"' "$res/$name.doctor.json" | cut -d'"' -f4 | sort -u | tr '\n' ' ')"
}
# overhead NAME ARGS...: bench/oom_guard_overhead.py on CUDA into overhead-NAME.json.
overhead() {
  local name=$1 limit; limit=$(lim "${OVERHEAD_SECONDS:-150}"); shift
  log "overhead $name (limit ${limit} s)"
  local t0=$SECONDS
  timeout "$limit" "$py" bench/oom_guard_overhead.py --device "$dev" --blocks "${OVERHEAD_BLOCKS:-12}" \
    --out "$res/overhead-$name.json" "$@" >"$res/overhead-$name.txt" 2>&1
  log "  $name: exit $? in $((SECONDS - t0)) s: $(tail -c 600 "$res/overhead-$name.txt" | tr '\n' ' ')"
}

parts=" ${VALIDATE_PARTS:-zero-code memory crash overhead} "
want() { [[ $parts == *" $1 "* ]]; }

# 1. zero-code against the instrumented example: plain now, Lightning at the end.
if want zero-code; then
zc=/tmp/gpumon-validate-zc; rm -rf "$zc"; mkdir -p "$zc"
"$py" $v strip examples/train_plain.py "$zc/train_plain.py" >>"$res/log.txt" 2>&1 || log "strip train_plain FAILED"
"$py" $v strip examples/train_lightning.py "$zc/train_lightning.py" >>"$res/log.txt" 2>&1 || log "strip train_lightning FAILED"
cp "$zc"/*.py "$res/" 2>/dev/null  # the stripped copies, for the record
rec h200-zero-code-plain-explicit 60 "$py" examples/train_plain.py --device "$dev" --steps 300
rec h200-zero-code-plain-auto 60 "$py" "$zc/train_plain.py" --device "$dev" --steps 300
fi

# 1b. zero-code under torchrun (one rank: the kinds of several GPUs are not lent): the launcher
# starts the rank as a child Python process, which record's hooks must reach as well.
if want torchrun; then
zc=/tmp/gpumon-validate-zc; mkdir -p "$zc"
[ -f "$zc/train_plain.py" ] || "$py" $v strip examples/train_plain.py "$zc/train_plain.py" >>"$res/log.txt" 2>&1 || log "strip train_plain FAILED"
run=(-m torch.distributed.run --standalone --nproc_per_node=1)
rec h200-zero-code-torchrun-explicit 90 "$py" "${run[@]}" examples/train_plain.py --device "$dev" --steps 300
rec h200-zero-code-torchrun-auto 90 "$py" "${run[@]}" "$zc/train_plain.py" --device "$dev" --steps 300
fi

# 2. the memory capture.
if want memory; then
rm -rf "$res/memcap" "$res/memcap-html"
rec h200-memory-capture 80 "$py" $v leak --device "$dev" --dir "$res/memcap" \
  --html-dir "$res/memcap-html" --out "$res/memory-capture.json"
log "  capture files: $(ls -l "$res/memcap" 2>/dev/null | tail -n +2 | awk '{print $5, $NF}' | tr '\n' ' ')"
grep -i -E "memory_leak|oom_forecast|memory_captured|allocator state" "$res/h200-memory-capture.txt" | head -8 >>"$res/log.txt"
fi

# 3. crash findings.
if want crash; then
rec h200-crash-exception 60 "$py" $v crash --how exception --at 30 --device "$dev"
rec h200-crash-sigkill 60 "$py" $v crash --how sigkill --at 30 --device "$dev"
for k in exception sigkill; do
  log "  crash-$k doctor: $(grep -i -A2 run_failed "$res/h200-crash-$k.doctor.txt" | head -3 | tr '\n' ' ' | head -c 400)"
done
fi

# 4. the OOM guard's cost with BatchNorm layers (their running statistics saved each step).
if want overhead; then
  overhead norms53 --norms 53
  overhead norms0 --norms 0
  overhead resnet50 --model resnet50 --steps "${RESNET_STEPS:-10}"
fi

# 1 again: Lightning, as the time allows.
if ! want zero-code; then
  :
elif [ "$(lim 90)" -ge 60 ]; then
  rec h200-zero-code-lightning-explicit 45 "$py" examples/train_lightning.py --device "$dev" --steps 200
  rec h200-zero-code-lightning-auto 45 "$py" "$zc/train_lightning.py" --device "$dev" --steps 200
else
  log "Lightning zero-code skipped: $((deadline - SECONDS)) s left"
fi

log "summary"
timeout "$(lim 60)" "$py" $v summarize --out "$res/summary.json" \
  --include "memory_capture=$res/memory-capture.json" \
  --include "overhead_norms53=$res/overhead-norms53.json" \
  --include "overhead_norms0=$res/overhead-norms0.json" \
  --include "overhead_resnet50=$res/overhead-resnet50.json" \
  "${recs[@]}" >"$res/summary.txt" 2>&1
log "  $(head -c 3000 "$res/summary.txt")"
log "done in ${SECONDS} s"
