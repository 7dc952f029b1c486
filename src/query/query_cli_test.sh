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
. "$(dirname "$0")/../util/testing/wait_for.sh"

# 1. The reader goes away after three lines: exit 0, no "Broken pipe", no error text.
"$gpumon" query --query-gpu=index,power.draw --format=csv -lms 5 2>"$tmp/err" | head -3 >"$tmp/out"
rc=("${PIPESTATUS[@]}")
[ "${rc[0]}" = 0 ] || fail "gpumon exited ${rc[0]} when the pipe closed"
[ "$(wc -l <"$tmp/out")" = 3 ] || fail "expected 3 lines, got: $(cat "$tmp/out")"
[ "$(cat "$tmp/err")" = "gpumon: simulated GPUs (scenario demo)" ] || fail "stderr: $(cat "$tmp/err")"

# 2. SIGINT and SIGTERM stop a loop at once with exit 0, output flushed. The interval is an
#    hour: a loop that waited for it would outlast the test's time limit, however fast or slow
#    the machine. The signal goes once the first line is out, so a slow start (a loaded
#    machine, a sanitizer build) cannot have it arrive before gpumon handles signals.
for sig in INT TERM; do
  # A fresh file: one left by an earlier run would let the wait below pass before this gpumon
  # has even started (the signal then kills it, or finds it ignoring SIGINT as a background job).
  rm -f "$tmp/out"
  "$gpumon" query --query-gpu=index -i 0 -l 3600 --format=csv,noheader >"$tmp/out" 2>/dev/null &
  pid=$!
  wait_for test -s "$tmp/out" || fail "SIG$sig: no first line"
  kill -s "$sig" "$pid"
  wait "$pid"
  rc=$?
  [ "$rc" = 0 ] || fail "SIG$sig: exit $rc"
  [ "$(cat "$tmp/out")" = "0" ] || fail "SIG$sig: output '$(cat "$tmp/out")'"
done

# 3. -f writes the file and nothing to stdout.
"$gpumon" query --query-gpu=index --format=csv,noheader -i 1 -f "$tmp/file.csv" >"$tmp/out" 2>/dev/null \
  || fail "-f exited $?"
[ ! -s "$tmp/out" ] && [ "$(cat "$tmp/file.csv")" = "1" ] || fail "-f wrote '$(cat "$tmp/file.csv")'"

# 4. nvidia-smi -q, word for word: the report of the chosen GPU's sections, in a file with -f;
#    a closed pipe ends it quietly.
"$gpumon" -q -i 1 -d MEMORY,PIDS -f "$tmp/q.txt" >"$tmp/out" 2>/dev/null || fail "-q exited $?"
[ ! -s "$tmp/out" ] || fail "-q -f wrote to stdout"
grep -q '^GPU 00000000:2A:00.0$' "$tmp/q.txt" && grep -q '^    FB Memory Usage$' "$tmp/q.txt" \
  && grep -q '^        Process ID                        : ' "$tmp/q.txt" \
  && ! grep -q 'Temperature' "$tmp/q.txt" || fail "-q -d MEMORY,PIDS wrote: $(cat "$tmp/q.txt")"
"$gpumon" -q -l 1 2>"$tmp/err" | head -3 >/dev/null
[ "${PIPESTATUS[0]}" = 0 ] || fail "-q -l exited ${PIPESTATUS[0]} when the pipe closed"
echo "ok"
