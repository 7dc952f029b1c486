#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The live view's keys inside tmux, at 200x50 and 80x24: select, sort, filter, GPU filter, tree
# (the ranks under the launcher that started them), SIGTERM declined and SIGKILL confirmed on a
# real process, and paging through 64 GPUs. The simulated GPUs' processes are real sleeping
# processes the test starts under one `sh` launcher; they hold no file at all, which is what
# lets gpumon show them (it cannot tell that they hold no /dev/nvidia* file).
#
# Usage: watch_keys_tmux_test.sh <gpumon> <fake libnvidia-ml.so.1> <scenario dir>
# Exit 77 (ctest: skipped) when tmux is not installed.
set -euo pipefail

gpumon=$1 fake=$2 scenarios=$3
command -v tmux >/dev/null 2>&1 || { echo "SKIP: tmux is not installed"; exit 77; }
[ -x "$gpumon" ] || { echo "FAIL: no gpumon at $gpumon"; exit 1; }

tmp=$(mktemp -d)
sock="gpumon-keys-test-$$"
. "$(dirname "$0")/watch_tmux_lib.sh"
launcher=
cleanup() {
  tm kill-server >/dev/null 2>&1 || true
  [ -z "$launcher" ] || pkill -KILL -P "$launcher" 2>/dev/null || true
  [ -z "$launcher" ] || kill -KILL "$launcher" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
row_of() { capture | grep -E "^ +[0-9]+ +$1 " | head -n1; }

# The launcher and its two "ranks"; each rank closes every file it inherited (a shell's
# redirections would leave the ones the test runner passed down) and sleeps.
rank='import os, time; os.closerange(0, 65536); time.sleep(600)'
sh -c '/usr/bin/python3 -c "$2" & echo $! >"$1/rank0"; /usr/bin/python3 -c "$2" & echo $! >"$1/rank1"; wait' \
  sh "$tmp" "$rank" </dev/null >/dev/null 2>&1 &
launcher=$!
has_ranks() { [ -s "$tmp/rank0" ] && [ -s "$tmp/rank1" ]; }
wait_for has_ranks || fail "the launcher did not start its ranks"
r0=$(cat "$tmp/rank0") r1=$(cat "$tmp/rank1")
# gpumon decides once per process whether it holds a GPU file, so the ranks must have closed
# theirs (Python starting up still holds some) before gpumon first sees them.
no_files() { [ -z "$(ls -A "/proc/$1/fd" 2>/dev/null)" ] && [ -d "/proc/$1" ]; }
ranks_ready() { no_files "$r0" && no_files "$r1"; }
wait_for ranks_ready || fail "the ranks did not close their files"

cat >"$tmp/job.json" <<JSON
{"name": "job", "description": "two GPUs, one real process each",
 "devices": [
  {"name": "NVIDIA H200", "memory_total_bytes": 150754820096,
   "fields": {"utilization_gpu_pct": 90, "memory_used_bytes": 60000000000},
   "processes": [{"pid": $r0, "name": "sleep", "used_memory_bytes": 20000000000, "sm_util_pct": 91}]},
  {"name": "NVIDIA H200", "memory_total_bytes": 150754820096,
   "fields": {"utilization_gpu_pct": 80, "memory_used_bytes": 70000000000},
   "processes": [{"pid": $r1, "name": "sleep", "used_memory_bytes": 50000000000, "sm_util_pct": 77}]}
 ]}
JSON

cat >"$tmp/run.sh" <<SCRIPT
for scenario in "$tmp/job.json" many-gpus-64; do
  env GPUMON_NVML_LIBRARY="$fake" GPUMON_FAKE_SCENARIO="\$scenario" GPUMON_SCENARIO_DIR="$scenarios" \
    LANG=C.UTF-8 TERM=screen-256color "$gpumon" watch --interval 0.3
  echo "EXIT=\$?"
  read -r _
done
sleep 3600
SCRIPT

tm new-session -d -s t -x 200 -y 50 "sh $tmp/run.sh"
wait_for pane_has "^ +0 +$r0 " || fail "rank 0 (pid $r0) not listed"
wait_for pane_has "^ +1 +$r1 " || fail "rank 1 (pid $r1) not listed"
last_line_has "select +s sort: GPU" || fail "the keys are not on the last line"
pane_has "GPU mem +SM % +mem %" || fail "no per-process SM % and memory-util columns"
# The sampler reads per-process utilization as a task of its own: not in every first frame.
sm_shown() { row_of "$r0" | grep -qE "GiB +91 "; }
wait_for sm_shown || fail "rank 0's SM % is not shown"

# Sort by GPU memory: rank 1 (50 GB) above rank 0 (20 GB); r reverses.
tm send-keys -t t s
wait_for last_line_has "sort: GPU mem" || fail "s did not change the sort"
first_row() { capture | grep -E "^ +[01] +($r0|$r1) " | head -n1; }
first_row | grep -qE "^ +1 +$r1 " || fail "GPU mem sort does not list the bigger process first"
tm send-keys -t t r
wait_for last_line_has "sort: GPU mem \(reversed\)" || fail "r did not reverse"
first_row | grep -qE "^ +0 +$r0 " || fail "reversed sort does not list the smaller first"

# Filter by PID: only that row; Escape in the prompt clears it.
tm send-keys -t t / "$r1"
wait_for last_line_has "Filter \(user, command, PID\): $r1" || fail "no filter prompt"
tm send-keys -t t Enter
wait_for pane_lacks "^ +0 +$r0 " || fail "the filter did not hide pid $r0"
pane_has "^ +1 +$r1 " || fail "the filter hid the matching pid"
tm send-keys -t t / Escape
wait_for pane_has "^ +0 +$r0 " || fail "Escape did not clear the filter"

# GPU filter: g shows GPU 0 alone, then GPU 1, then all.
tm send-keys -t t g
wait_for last_line_has "g/G GPU 0" || fail "g did not pick GPU 0"
wait_for pane_lacks "^GPU 1 " || fail "GPU 1 still shown under the GPU filter"
pane_lacks "^ +1 +$r1 " || fail "GPU 1's process still listed under the GPU filter"
tm send-keys -t t g g
wait_for last_line_has "g/G GPU: all" || fail "g did not come back to all GPUs"
# G types the GPU's index: GPU 1 alone; Enter on nothing, all again.
tm send-keys -t t G
wait_for last_line_has "GPU to show \(index\): _" || fail "no GPU prompt after G"
tm send-keys -t t 1 Enter
wait_for last_line_has "g/G GPU 1" || fail "G 1 Enter did not pick GPU 1"
wait_for pane_lacks "^GPU 0 " || fail "GPU 0 still shown after G 1"
tm send-keys -t t G Enter
wait_for last_line_has "g/G GPU: all" || fail "G Enter did not come back to all GPUs"

# Tree: the two ranks under their launcher.
tm send-keys -t t t
wait_for pane_has "^ +- +$launcher +sh -c" || fail "tree: the launcher (pid $launcher) is not shown"
pane_has "└─ /usr/bin/python3 -c import os" || fail "tree: the ranks are not drawn under the launcher"
tm send-keys -t t t
wait_for pane_lacks "^ +- +$launcher " || fail "t did not leave the tree"

# SIGTERM declined: nothing sent. SIGKILL confirmed on the selected row (rank 0 is first in
# the reversed GPU-memory sort).
tm send-keys -t t Down T
wait_for last_line_has "Send SIGTERM to PID $r0\? y: send, other keys: cancel\.  /usr/bin/python3 -c import os" || fail "no SIGTERM prompt for $r0"
tm send-keys -t t n
wait_for last_line_has "Not sent\." || fail "declining did not say so"
kill -0 "$r0" || fail "pid $r0 died though the signal was declined"
tm send-keys -t t K
wait_for last_line_has "Send SIGKILL to PID $r0" || fail "no SIGKILL prompt"
tm send-keys -t t y
wait_for last_line_has "Sent SIGKILL to PID $r0\." || fail "SIGKILL not reported as sent"
gone() { ! kill -0 "$r0" 2>/dev/null || grep -q '^State:.*Z' "/proc/$r0/status" 2>/dev/null; }
wait_for gone || fail "pid $r0 still runs after SIGKILL"
kill -0 "$r1" || fail "pid $r1 was signalled too"

# 80x24: everything fits, the keys stay on the last line.
tm resize-window -t t -x 80 -y 24
fits() {
  local f line
  f=$(capture)
  [ "$(wc -l <<<"$f")" -le 24 ] || return 1
  while IFS= read -r line; do [ "${#line}" -le 80 ] || return 1; done <<<"$f"
  tail -n1 <<<"$f" | grep -qE "^ (q quit|Sent)"
}
wait_for fits || fail "the 80x24 frame does not fit or lost its last line"
tm send-keys -t t q
wait_for pane_has "^EXIT=0$" || fail "q did not exit with status 0"

# 64 GPUs at 80x24: one line each, PgDn pages on, PgUp back.
tm send-keys -t t Enter
wait_for pane_has "^GPUs 0-[0-9]+ of 64: PgUp/PgDn" || fail "64 GPUs: no paging line"
tm send-keys -t t NPage
wait_for pane_has "^GPUs [1-9][0-9]*-[0-9]+ of 64" || fail "PgDn did not page on"
tm send-keys -t t PPage
wait_for pane_has "^GPUs 0-[0-9]+ of 64" || fail "PgUp did not page back"
pane_has "^ 0 " || fail "GPU 0 not back on the first page"
tm send-keys -t t q
wait_for pane_has "^EXIT=0$" || fail "second run: q did not exit with status 0"
echo "PASS: select, sort, filter, GPU filter, tree, SIGTERM declined, SIGKILL sent, 80x24, 64-GPU paging"
