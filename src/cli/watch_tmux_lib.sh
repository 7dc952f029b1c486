# SPDX-License-Identifier: MIT
# What the live view's tmux tests share: a private tmux server (socket named by $sock) whose
# session "t" runs the view, reading its pane, and failing with the pane shown. Sourced after
# the test sets $sock; it also brings wait_for (src/util/testing/wait_for.sh).
tm() { tmux -L "$sock" -f /dev/null "$@"; }
capture() { tm capture-pane -p -t t; }
# Says what failed, shows the pane, exits 1.
fail() {
  echo "FAIL: $*"
  echo "--- pane:"
  tm capture-pane -p -t t 2>/dev/null || true
  exit 1
}
# Whether the pane has (lacks) a line matching the extended regex $1.
pane_has() { capture | grep -qE -- "$1"; }
pane_lacks() { ! capture | grep -qE -- "$1"; }
# Whether the pane's last line (the view's keys line) matches $1.
last_line_has() { capture | tail -n1 | grep -qE -- "$1"; }
. "$(dirname "$0")/../util/testing/wait_for.sh"
