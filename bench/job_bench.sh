#!/bin/sh
# SPDX-License-Identifier: MIT
# Times `gpumon doctor` and `gpumon report` on one job's 16 nodes x 8 ranks x 1 h: each node's recording has 8 GPUs
# sampled at 10 Hz and every step of its 8 ranks at 10 Hz (288,000 steps a node), its clock off
# by up to 1.5 s (bars: doctor <= 10 s, report <= 15 s and <= 10 MB, both <= 2 GB RSS, on the
# 2-core development machine).
# usage: bench/job_bench.sh BUILD_DIR [WORK_DIR]
#   BUILD_DIR: a Release build with -DGPUMON_BUILD_BENCH=ON (targets gpumon and
#   gpumon_bench_report_synth). The recordings are written once to WORK_DIR/job-bench (default
#   /tmp) and reused by later runs.
set -eu
build=$1
dir=${2:-/tmp}/job-bench
nodes=16
mkdir -p "$dir"
k=0
while [ $k -lt $nodes ]; do
  f=$dir/node-$(printf %02d $k).gpumon
  # Clocks from -750 to +750 ms apart, node 0 (rank 0's) off by -750 ms too.
  [ -f "$f" ] || "$build/gpumon_bench_report_synth" "$f" 1 10 8 --ranks 8 --node $k \
    --step-hz 10 --clock-ms $(( (k * 100) - 750 )) >/dev/null
  k=$((k + 1))
done
echo "recordings: $(du -sk "$dir" | cut -f1) KiB in $nodes files"
for i in 1 2 3; do
  /usr/bin/time -f "doctor run $i: %e s wall, %U s user, %S s sys, peak RSS %M KiB" \
    "$build/gpumon" doctor "$dir" --json >"$dir/doctor.json"
done
for i in 1 2 3; do
  /usr/bin/time -f "report run $i: %e s wall, %U s user, %S s sys, peak RSS %M KiB" \
    "$build/gpumon" report "$dir" -o "$dir/job.html" --force >/dev/null
done
echo "report: $(stat -c %s "$dir/job.html") bytes"
/usr/bin/python3 - "$dir/doctor.json" <<'PYEOF'
import json, sys
j = json.load(open(sys.argv[1]))
print("job", j["job"], "nodes", len(j["nodes"]), "health", j["health_score"])
print("clock offsets (ms):", [round(n["clock"]["offset_s"] * 1000, 1) for n in j["nodes"]])
print("findings across nodes:", [(f["id"], f["ranks"][:3], f.get("nodes")) for f in j["findings"]])
PYEOF
