#!/usr/bin/env bash
# One full verification run on the GPU machine: build, compare `gpumon query` with
# nvidia-smi field by field (idle and under load), list compute apps while PyTorch holds memory,
# run the benchmarks, capture real-GPU scenarios. Everything lands in $OUT/results.tar.gz.
set -uo pipefail
out=${OUT:-/tmp/verify}; work=$out/verify; mkdir -p "$work"
log() { echo "== $*" | tee -a "$work/log.txt"; }
exec > >(tee -a "$work/console.txt") 2>&1

log "build (release, no tests)"
cmake -S . -B build-release -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPUMON_BUILD_BENCH=ON \
  -DGPUMON_BUILD_TESTS=OFF >"$work/cmake.txt" 2>&1 && cmake --build build-release -j 16 >"$work/build.txt" 2>&1 \
  || { log "BUILD FAILED"; tail -50 "$work/build.txt" "$work/cmake.txt"; }
g=build-release/gpumon
nvidia-smi --query-gpu=name,driver_version,persistence_mode --format=csv >"$work/machine.txt"

log "snapshot and query"
$g >"$work/snapshot.txt" 2>&1; echo "rc=$?" >>"$work/snapshot.txt"
$g --json >"$work/snapshot.json" 2>&1
$g query --query-gpu=index,name,memory.used,power.draw --format=json >"$work/query.json" 2>&1
$g query --query-gpu=index,utilization.gpu,power.draw --format=jsonl -lms 100 -c 5 >"$work/query.jsonl" 2>&1

log "compare idle"
python3 tools/device/compare_with_nvidia_smi.py --gpumon $g --label idle --out "$work" | tee -a "$work/log.txt"

log "compare under load"
python3 tools/device/load.py 60 4 >"$work/load1.txt" 2>&1 &
lp=$!
for i in $(seq 60); do grep -q ready "$work/load1.txt" 2>/dev/null && break; sleep 0.5; done; sleep 3
python3 tools/device/compare_with_nvidia_smi.py --gpumon $g --label load --out "$work" | tee -a "$work/log.txt"

log "compute apps while PyTorch holds 4 GiB (pid $lp)"
for i in $(seq 30); do nvidia-smi --query-compute-apps=pid --format=csv,noheader | grep -q . && break; sleep 0.5; done
for fmt in csv csv,noheader,nounits; do
  nvidia-smi --query-compute-apps=pid,process_name,gpu_uuid,gpu_bus_id,used_memory --format=$fmt
  $g query --query-compute-apps=pid,process_name,gpu_uuid,gpu_bus_id,used_memory --format=$fmt
done >"$work/compute-apps.txt" 2>&1
$g >"$work/snapshot-load.txt" 2>&1
timeout 5 $g watch --count 2 >"$work/watch-nontty.txt" 2>&1
kill $lp 2>/dev/null; wait $lp 2>/dev/null

log "bench: sample cost vs raw NVML"
build-release/gpumon_bench_sample --blocks 30 --samples 200 --out "$work/bench-sample.json" | tee "$work/bench-sample.txt"
log "bench: query vs nvidia-smi"
python3 bench/query_vs_nvidia_smi.py --gpumon $g --blocks 20 --long 15 --short 3 --out "$work/bench-query.json" | tee "$work/bench-query.txt"

log "capture scenarios"
python3 tools/capture_scenario.py --duration 20 --interval 0.1 --name h200-idle --out "$work/h200-idle.json" >"$work/capture-idle.txt" 2>&1
python3 tools/device/load.py 45 8 >"$work/load2.txt" 2>&1 &
lp=$!; sleep 8
python3 tools/capture_scenario.py --duration 30 --interval 0.1 --name h200-training --out "$work/h200-training.json" >"$work/capture-load.txt" 2>&1
kill $lp 2>/dev/null; wait $lp 2>/dev/null

log "done"
tar -C "$out" -czf "$out/results.tar.gz" verify
cp "$work/log.txt" "$out/log.txt"
