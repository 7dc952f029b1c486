#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs one of examples/ the documented way, `gpumon record -o run.gpumon -- python3 EXAMPLE`,
# on the fake NVML, and checks the recording holds STEPS steps. An example whose library is
# absent (Lightning, transformers) must print its "skipped" line and exit 0 instead.
# usage: run_example.sh PYTHON GPUMON_BINARY FAKE_NVML EXAMPLE STEPS [ARGS...]
set -euo pipefail
python=$1 binary=$2 fake_nvml=$3 example=$4 steps=$5
shift 5
repo=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=$(env -u GPUMON_AGENT_SOCKET -u RANK -u LOCAL_RANK -u WORLD_SIZE \
  PYTHONPATH="$repo/python" XDG_RUNTIME_DIR="$tmp" OMP_NUM_THREADS=1 \
  GPUMON_NVML_LIBRARY="$fake_nvml" GPUMON_FAKE_SCENARIO=demo \
  "$binary" record -o "$tmp/run.gpumon" -- "$python" "$repo/examples/$example" "$@" 2>&1) || {
  echo "$out"; echo "FAIL: $example exited with an error"; exit 1; }
echo "$out"
name=${example%.py}
if grep -q "^$name: skipped, " <<<"$out"; then
  exit 0
fi
got=$("$binary" export "$tmp/run.gpumon" --steps --format jsonl | wc -l)
if [ "$got" -ne "$steps" ]; then
  echo "FAIL: $example: $got steps recorded, $steps expected"
  exit 1
fi
echo "ok: $example: $got steps recorded"
