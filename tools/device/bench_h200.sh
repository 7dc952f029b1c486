#!/usr/bin/env bash
# Short GPU-machine run: the sample-cost benchmark (both arms skip calls found NOT_SUPPORTED)
# and the side-by-side comparison under a steady load. Results in $OUT.
set -uo pipefail
out=${OUT:-/tmp/bench}; mkdir -p "$out"
cmake -S . -B build-release -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPUMON_BUILD_BENCH=ON \
  -DGPUMON_BUILD_TESTS=OFF >"$out/cmake.txt" 2>&1 && cmake --build build-release -j 16 >"$out/build.txt" 2>&1 \
  || { echo "BUILD FAILED"; tail -30 "$out/build.txt"; exit 1; }
build-release/gpumon_bench_sample --blocks 30 --samples 200 --out "$out/bench-sample.json" | tee "$out/bench-sample.txt"
python3 tools/device/load.py 40 4 steady >"$out/load.txt" 2>&1 &
lp=$!
for i in $(seq 60); do grep -q ready "$out/load.txt" 2>/dev/null && break; sleep 0.5; done; sleep 3
python3 tools/device/compare_with_nvidia_smi.py --gpumon build-release/gpumon --label steady-load --out "$out"
kill $lp 2>/dev/null; wait $lp 2>/dev/null
