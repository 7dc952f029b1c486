#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `gpumon watch` inside tmux, on the fake NVML's demo scenario (8 simulated H200s): the first
# frame shows the SIMULATED label and 8 GPU blocks, values refresh, a resize redraws within the
# new size, `q` quits with status 0, and the terminal is back as it was (main screen, cursor
# visible, same stty settings). A second run checks the same after Ctrl-C.
#
# Usage: watch_tmux_test.sh <gpumon> <fake libnvidia-ml.so.1> <scenario dir>
# Exit 77 (ctest: skipped) when tmux is not installed.
set -euo pipefail

gpumon=$1 fake=$2 scenarios=$3
command -v tmux >/dev/null 2>&1 || { echo "SKIP: tmux is not installed"; exit 77; }
[ -x "$gpumon" ] || { echo "FAIL: no gpumon at $gpumon"; exit 1; }
[ -f "$fake" ] || { echo "FAIL: no fake NVML at $fake (build the gpumon_fake_nvml target)"; exit 1; }

tmp=$(mktemp -d)
sock="gpumon-watch-test-$$"
. "$(dirname "$0")/watch_tmux_lib.sh"
cleanup() { tm kill-server >/dev/null 2>&1 || true; rm -rf "$tmp"; }
trap cleanup EXIT

# The first frame is whole: the label on top, 8 GPU blocks with their utilization, processes.
first_frame() {
  local f
  f=$(capture)
  head -n1 <<<"$f" | grep -q '^SIMULATED GPUs' &&
    [ "$(grep -cE '^GPU [0-7]  NVIDIA H200' <<<"$f")" = 8 ] &&
    [ "$(grep -c '^  util ' <<<"$f")" = 8 ] && grep -q '^Processes' <<<"$f"
}
# The GPU lines differ from those of $first: the values refreshed.
refreshed() {
  [ "$(grep -E '^(GPU |  util )' <<<"$first")" != "$(grep -E '^(GPU |  util )' <<<"$(capture)")" ]
}
# The frame fits the 90x20 window and shows the one-line-per-GPU layout down to GPU 7.
resized_frame() {
  local f line
  f=$(capture)
  [ "$(wc -l <<<"$f")" -le 20 ] && head -n1 <<<"$f" | grep -q '^SIMULATED GPUs' &&
    grep -qE '^ 7 ' <<<"$f" || return 1
  while IFS= read -r line; do [ "${#line}" -le 90 ] || return 1; done <<<"$f"
}

# The shell survives the Ctrl-C of the second run (its trap runs after gpumon exits); it waits
# for Enter between the runs so the test can look at the screen run 1 left.
cat >"$tmp/run.sh" <<SCRIPT
trap 'echo SHELL-GOT-SIGINT' INT
stty -g >"$tmp/stty.before"
echo MARKER-BEFORE-GPUMON
for run in 1 2; do
  [ \$run = 1 ] || read -r _
  env GPUMON_NVML_LIBRARY="$fake" GPUMON_FAKE_SCENARIO=demo GPUMON_SCENARIO_DIR="$scenarios" \
    LANG=C.UTF-8 TERM=screen-256color "$gpumon" watch --interval 0.3
  echo "EXIT\$run=\$?"
  if [ "\$(stty -g)" = "\$(cat "$tmp/stty.before")" ]; then echo TTY-RESTORED\$run; else echo TTY-CHANGED\$run; fi
done
sleep 3600  # keeps the pane for the checks; the cleanup ends it
SCRIPT

tm new-session -d -s t -x 132 -y 50 "sh $tmp/run.sh"
wait_for pane_has "^SIMULATED GPUs" || fail "no SIMULATED label"
wait_for first_frame || fail "the first frame is not whole"

first=$(capture)
[ "$(tm display-message -p -t t '#{alternate_on}')" = 1 ] || fail "not on the alternate screen"
head -n1 <<<"$first" | grep -q '^SIMULATED GPUs — scenario "demo"' ||
  fail "the SIMULATED label is not the first line"
blocks=$(grep -cE '^GPU [0-7]  NVIDIA H200' <<<"$first" || true)
[ "$blocks" = 8 ] || fail "expected 8 GPU blocks, found $blocks"
[ "$(grep -c '^  util ' <<<"$first" || true)" = 8 ] || fail "expected 8 utilization lines"

wait_for refreshed || fail "GPU values did not refresh"

tm resize-window -t t -x 90 -y 20
wait_for resized_frame || true  # the checks below say what is wrong
small=$(capture)
[ "$(wc -l <<<"$small")" -le 20 ] || fail "more lines than the 20-row window"
head -n1 <<<"$small" | grep -q '^SIMULATED GPUs' || fail "label lost after the resize"
while IFS= read -r line; do
  [ "${#line}" -le 90 ] || fail "line wider than 90 columns after the resize: $line"
done <<<"$small"
grep -qE '^ 7 ' <<<"$small" || fail "GPU 7 not shown in the one-line-per-GPU layout"

# Checks that run $1 has exited with status 0 and left the terminal as it found it.
check_restored() {
  # The TTY line comes last: once it is there, so is everything before it.
  wait_for pane_has "^TTY-(RESTORED|CHANGED)$1\$" || fail "run $1: gpumon did not exit"
  local after
  after=$(capture)
  grep -qx "EXIT$1=0" <<<"$after" || fail "run $1: exit status was not 0"
  grep -qx "TTY-RESTORED$1" <<<"$after" || fail "run $1: stty settings differ after gpumon exited"
  grep -qx "MARKER-BEFORE-GPUMON" <<<"$after" || fail "run $1: the main screen was not restored"
  grep -q "SIMULATED GPUs" <<<"$after" && fail "run $1: live view left on the main screen"
  [ "$(tm display-message -p -t t '#{alternate_on}')" = 0 ] || fail "run $1: alternate screen on"
  [ "$(tm display-message -p -t t '#{cursor_flag}')" = 1 ] || fail "run $1: cursor left hidden"
}

tm send-keys -t t q
check_restored 1

# Second run: Ctrl-C instead of q.
tm send-keys -t t Enter
wait_for resized_frame || fail "second run: no whole first frame (90x20)"
tm send-keys -t t C-c
check_restored 2
echo "PASS: 8 GPU blocks, SIMULATED label, refresh, resize, q and Ctrl-C, terminal restored"
