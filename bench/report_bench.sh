#!/bin/sh
# SPDX-License-Identifier: MIT
# Times `gpumon report` on a synthetic 24 h x 10 Hz x 8 GPU recording (6.9 million GPU-samples;
# the target is <= 5 s and <= 5 MB on the 2-core development machine).
# usage: bench/report_bench.sh BUILD_DIR [WORK_DIR]
#   BUILD_DIR: a Release build with -DGPUMON_BUILD_BENCH=ON (targets gpumon and
#   gpumon_bench_report_synth). The recording is written once to WORK_DIR (default /tmp) and
#   reused by later runs.
set -eu
build=$1
work=${2:-/tmp}
rec=$work/report-bench-24h.gpumon
[ -f "$rec" ] || "$build/gpumon_bench_report_synth" "$rec" 24 10 8
echo "recording: $(du -k "$rec" | cut -f1) KiB"
for i in 1 2 3; do
  rm -f "$work/report-bench.html"
  /usr/bin/time -f "run $i: %e s wall, %U s user, %S s sys, peak RSS %M KiB" \
    "$build/gpumon" report "$rec" -o "$work/report-bench.html"
done
echo "report: $(stat -c %s "$work/report-bench.html") bytes"
