#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `gpumon query` as a shell user runs it, against the fake NVML: a closed pipe (`| head -3`) and
# Ctrl-C / SIGTERM must end a loop quietly with exit 0, and nothing but CSV may reach stdout.
# usage: query_cli_test.sh GPUMON FAKE_LIBRARY SCENARIO_DIR   (exit 77: skipped)
set -uo pipefail
gpumon=$1 fake=$2 scenarios=$3
[ -x "$gpumon" ] && [ -f "$fake" ] || { echo "skip: $gpumon or $fake not built"; exit 77; }
export GPUMON_NVML_LIBRARY=$fake GPUMON_FAKE_SCENARIO=$scenarios/demo.json
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# 1. The reader goes away after three lines: exit 0, no "Broken pipe", no error text.
"$gpumon" query --query-gpu=index,power.draw --format=csv -lms 5 2>"$tmp/err" | head -3 >"$tmp/out"
rc=("${PIPESTATUS[@]}")
[ "${rc[0]}" = 0 ] || fail "gpumon exited ${rc[0]} when the pipe closed"
[ "$(wc -l <"$tmp/out")" = 3 ] || fail "expected 3 lines, got: $(cat "$tmp/out")"
[ "$(cat "$tmp/err")" = "gpumon: simulated GPUs (scenario demo)" ] || fail "stderr: $(cat "$tmp/err")"

# 2. SIGINT and SIGTERM stop a loop at once (the interval is 100 s) with exit 0, output flushed.
#    The signal goes once the first line is out, so a slow start (a loaded machine, a sanitizer
#    build) cannot have it arrive before gpumon handles signals.
for sig in INT TERM; do
  "$gpumon" query --query-gpu=index -i 0 -l 100 --format=csv,noheader >"$tmp/out" 2>/dev/null &
  pid=$!
  for _ in $(seq 200); do [ -s "$tmp/out" ] && break; sleep 0.05; done
  start=$(date +%s%N)
  kill -s "$sig" "$pid"
  wait "$pid"
  rc=$?
  took_ms=$(( ($(date +%s%N) - start) / 1000000 ))
  [ "$rc" = 0 ] || fail "SIG$sig: exit $rc"
  [ "$(cat "$tmp/out")" = "0" ] || fail "SIG$sig: output '$(cat "$tmp/out")'"
  [ "$took_ms" -lt 5000 ] || fail "SIG$sig: took $took_ms ms to stop"
done

# 3. -f writes the file and nothing to stdout.
"$gpumon" query --query-gpu=index --format=csv,noheader -i 1 -f "$tmp/file.csv" >"$tmp/out" 2>/dev/null \
  || fail "-f exited $?"
[ ! -s "$tmp/out" ] && [ "$(cat "$tmp/file.csv")" = "1" ] || fail "-f wrote '$(cat "$tmp/file.csv")'"
echo "ok"
