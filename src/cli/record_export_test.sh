#!/bin/sh
# SPDX-License-Identifier: MIT
# `gpumon record -- COMMAND` on the demo scenario, then `gpumon export`: the command's exit
# status comes back, every tick of every GPU is exported, bad use is refused.
# usage: record_export_test.sh GPUMON FAKE_NVML_LIBRARY
g=$1
export GPUMON_NVML_LIBRARY=$2 GPUMON_FAKE_SCENARIO=demo
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
fail() { echo "FAIL: $*"; cat "$d/err" 2>/dev/null; exit 1; }
waiting="$(dirname "$0")/../util/testing/wait_for.sh"

# The command runs until the recording it is part of has committed a tick, then exits 3.
"$g" record -o "$d/r.gpumon" --interval 100 -- sh -c '
  g=$0 rec=$1
  . "$2"
  has_tick() { [ "$("$g" export "$rec" --format csv 2>/dev/null | wc -l)" -ge 9 ]; }
  wait_for has_tick
  exit 3' "$g" "$d/r.gpumon" "$waiting" 2>"$d/err"
rc=$?
[ "$rc" = 3 ] || fail "record returned $rc, not the command's 3"
grep -q "SIMULATED GPUs" "$d/err" || fail "no simulated label"
ticks=$(sed -n 's/.* 8 GPU(s), \([0-9]*\) ticks* over .*/\1/p' "$d/err")
[ -n "$ticks" ] || fail "no summary"

# Every tick of every GPU: a header, then 8 rows a tick; stderr names the scenario.
rows=$("$g" export "$d/r.gpumon" --format csv 2>"$d/err" | wc -l)
grep -q "SIMULATED GPUs (scenario demo)" "$d/err" || fail "export does not say the GPUs were simulated"
[ "$ticks" -ge 1 ] && [ "$rows" = $((1 + 8 * ticks)) ] ||
  fail "$rows CSV lines for $ticks ticks of 8 GPUs"
"$g" export "$d/r.gpumon" --format jsonl --gpu 3 | head -1 | grep -q '"gpu":3' || fail "jsonl --gpu 3"

"$g" record -o "$d/r.gpumon" -- true 2>"$d/err" && fail "overwrote an existing recording"
grep -q "already exists.*--force" "$d/err" || fail "no 'already exists ... --force' message"
"$g" record -o "$d/r.gpumon" --force --interval 100 -- true 2>"$d/err" || fail "--force did not overwrite"
"$g" record --interval 5 2>"$d/err"
[ $? = 2 ] || fail "--interval 5 accepted"
"$g" record -o "$d/x.gpumon" -- /nonexistent/cmd 2>"$d/err"
[ $? = 127 ] || fail "a command that cannot run must give 127"
[ -e "$d/x.gpumon" ] && fail "a command that cannot run left a recording behind"
grep -q "cannot run '/nonexistent/cmd'" "$d/err" || fail "no 'cannot run' message"
"$g" record -o "$d/y.gpumon" -- no-such-command-gpumon 2>"$d/err"
[ $? = 127 ] || fail "a command not on PATH must give 127"
[ -e "$d/y.gpumon" ] && fail "a command not on PATH left a recording behind"
"$g" export "$d/none.gpumon" --format csv 2>"$d/err"
[ $? = 1 ] || fail "export of a missing file must fail with 1"
echo "record/export: ok"
