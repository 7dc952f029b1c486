#!/usr/bin/env bash
# The sampler's figures on the GPU machine, in one script per device call.
#   sampler_h200.sh probe     build; per-task sampler cost idle and under a GEMM load; GPM, driver
#                            buffers and recording size from `gpumon record` under that load;
#                            nvml_semantics.py (GetSamples order/units, PCIe KB, process util)
#   sampler_h200.sh overhead  build; bench/training_overhead.py on the gemm and launch loops
#   sampler_h200.sh launch    build; the launch-bound loop pinned, 14 blocks of 4 s windows
# Results go to $OUT (tarred into results.tgz, since only a few files come back).
# DEVDEPS=folder with sqlite3/zstd headers for machines without libsqlite3-dev/libzstd-dev
# (tools/device/build_env.sh builds).
set -uo pipefail
part=${1:-probe}
out=${OUT:-/tmp/gpumon-sampler}; mkdir -p "$out/r"
res="$out/r"
log() { echo "[$(date +%T)] $*" | tee -a "$res/log.txt"; }

. tools/device/build_env.sh
log "build"
gpumon_build build-release -DGPUMON_BUILD_BENCH=ON -- gpumon gpumon_bench_sampler_tasks ||
  { tar -czf "$out/results.tgz" -C "$out" r; exit 1; }
g=build-release/gpumon
grep -q "record" <("$g" record --help 2>&1) || log "WARNING: gpumon record not built"
nvidia-smi --query-gpu=name,driver_version,pci.bus_id,power.limit --format=csv >"$res/gpu.txt" 2>&1

wait_ready() { for _ in $(seq 120); do grep -q ready "$1" 2>/dev/null && return; sleep 0.5; done; }

if [ "$part" = probe ]; then
  log "sampler tasks, idle GPU"
  build-release/gpumon_bench_sampler_tasks --hz 10 --seconds 10 >"$res/tasks-idle-10hz.json" 2>&1
  build-release/gpumon_bench_sampler_tasks --hz 100 --seconds 10 >"$res/tasks-idle-100hz.json" 2>&1
  build-release/gpumon_bench_sampler_tasks --hz 10 --seconds 5 --pcie >"$res/tasks-idle-10hz-pcie.json" 2>&1
  log "GEMM load with two recordings and the tasks bench"
  python3 tools/device/load.py 48 4 steady >"$res/load.txt" 2>&1 &
  lp=$!
  wait_ready "$res/load.txt"; sleep 2
  rm -f /dev/shm/gemm-*.gpumon
  "$g" record -o /dev/shm/gemm-10hz.gpumon --interval 100 2>"$res/record-10hz.txt" &
  r10=$!
  "$g" record -o /dev/shm/gemm-1hz.gpumon --interval 1000 2>"$res/record-1hz.txt" &
  r1=$!
  build-release/gpumon_bench_sampler_tasks --hz 10 --seconds 12 >"$res/tasks-load-10hz.json" 2>&1
  build-release/gpumon_bench_sampler_tasks --hz 100 --seconds 12 >"$res/tasks-load-100hz.json" 2>&1
  sleep 10
  kill -INT $r10 $r1; wait $r10 $r1
  kill $lp 2>/dev/null; wait $lp 2>/dev/null
  cp /dev/shm/gemm-*.gpumon "$res/"
  for f in "$res"/gemm-*.gpumon; do
    "$g" export "$f" --format csv >"${f%.gpumon}.csv" 2>&1
    ls -l "$f" >>"$res/sizes.txt"
  done
  log "NVML semantics"
  timeout 120 python3 tools/device/nvml_semantics.py "$res/nvml-semantics.json" >"$res/nvml-semantics.txt" 2>&1
elif [ "$part" = seed ]; then
  # Same work side by side: gpumon reading only the seed's NVML fields against the seed thread.
  log "same-fields comparison with the seed thread"
  for b in 1 2 3 4 5 6; do
    build-release/gpumon_bench_sampler_tasks --hz 10 --seconds 5 --seed-fields >"$res/seed-gpumon-$b.json" 2>&1
    python3 tools/device/seed_cost.py 5 >"$res/seed-python-$b.json" 2>&1
    python3 tools/device/seed_cost.py 5 --nvml-only >"$res/seed-nvml-$b.json" 2>&1
  done
  cat "$res"/seed-*.json | grep -o '"cpu_us_per_sample": [0-9.]*\|"us_per_tick": [0-9.]*' | sort | uniq -c | head -40
elif [ "$part" = launch ]; then
  # The launch-bound loop again: pinned to 4 cores, longer windows, more blocks, fewer arms.
  log "overhead launch, pinned"
  timeout 420 python3 bench/training_overhead.py --gpumon "$g" --loop launch --blocks 14 --seconds 4 \
    --arms off,off-control,gpumon-10hz,gpumon-100hz,seed-thread-10hz --cpus 2-5 --out "$res" \
    >"$res/overhead-launch-pinned.txt" 2>&1
  mv "$res/overhead-launch.json" "$res/overhead-launch-pinned.json"
  build-release/gpumon_bench_sampler_tasks --hz 10 --seconds 10 >"$res/tasks-idle-10hz.json" 2>&1
  build-release/gpumon_bench_sampler_tasks --hz 100 --seconds 10 >"$res/tasks-idle-100hz.json" 2>&1
else
  for loop in gemm launch; do
    log "overhead $loop"
    timeout 280 python3 bench/training_overhead.py --gpumon "$g" --loop "$loop" \
      --blocks "${BLOCKS:-8}" --seconds "${SECONDS_PER_ARM:-2.5}" --out "$res" >"$res/overhead-$loop.txt" 2>&1
    tail -3 "$res/overhead-$loop.txt"
  done
  build-release/gpumon_bench_sampler_tasks --hz 10 --seconds 10 >"$res/tasks-idle-10hz.json" 2>&1
  build-release/gpumon_bench_sampler_tasks --hz 100 --seconds 10 >"$res/tasks-idle-100hz.json" 2>&1
fi
log "done"
tar -czf "$out/results.tgz" -C "$out" r
cat "$res"/tasks-*.json 2>/dev/null | head -80
