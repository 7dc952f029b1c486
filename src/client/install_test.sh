#!/bin/sh
# SPDX-License-Identifier: MIT
# `cmake --install` of this build, then a program outside the repository finds the client with
# find_package(gpumon CONFIG), links gpumon::client and sends three steps to the installed
# `gpumon agent` (on the fake NVML), which records them.
# usage: install_test.sh BUILD_DIR FAKE_NVML_LIBRARY SOURCE_DIR
set -u
build=$1
export GPUMON_NVML_LIBRARY=$2 GPUMON_FAKE_SCENARIO=demo
src=$3
d=$(mktemp -d)
agent=
trap '[ -n "$agent" ] && kill "$agent" 2>/dev/null; rm -rf "$d"' EXIT
fail() { echo "FAIL: $*"; cat "$d/log" 2>/dev/null; exit 1; }
. "$src/../util/testing/wait_for.sh"

cmake --install "$build" --prefix "$d/prefix" >"$d/log" 2>&1 || fail "cmake --install"
[ -x "$d/prefix/bin/gpumon" ] || fail "no bin/gpumon"
[ -f "$d/prefix/include/gpumon/monitor.h" ] || fail "no include/gpumon/monitor.h"
cmake -S "$src/install_test" -B "$d/consumer" -DCMAKE_PREFIX_PATH="$d/prefix" >"$d/log" 2>&1 ||
  fail "find_package(gpumon) in a consumer project"
cmake --build "$d/consumer" >"$d/log" 2>&1 || fail "building the consumer against gpumon::client"

"$d/prefix/bin/gpumon" agent --socket "$d/a.sock" -o "$d/r.gpumon" --interval 100 \
  --no-diagnose 2>"$d/agent.err" &
agent=$!
wait_for test -S "$d/a.sock" || fail "the installed agent did not listen: $(cat "$d/agent.err")"
"$d/consumer/consumer" "$d/a.sock" >"$d/log" 2>&1 || fail "consumer exit $?"
# The agent stops without reading what a client may still have in flight: first its recording
# (a commit a second) holds the three steps.
steps() { "$d/prefix/bin/gpumon" export "$d/r.gpumon" --steps --format csv 2>/dev/null | wc -l; }
three_steps() { [ "$(steps)" = 4 ]; }
wait_for three_steps
kill -TERM "$agent"
wait "$agent" || fail "the agent exited with $?"
agent=
n=$(steps)
[ "$n" = 4 ] || fail "the recording has $((n - 1)) steps, not 3"
echo "install: ok"
