# SPDX-License-Identifier: MIT
# wait_for COMMAND [ARGS...]: runs COMMAND every 0.05 s until it succeeds. Returns 1 when it has
# not after 60 s: that limit only ends a hung test, never a margin a loaded machine could miss.
# POSIX sh; tests source it (. "$(dirname "$0")/../util/testing/wait_for.sh"). The C++ and
# Python tests have the same helper: eventually.h and wait_for.py beside this file.
wait_for() {
  wait_for_end=$(($(date +%s) + 60))
  until "$@"; do
    [ "$(date +%s)" -lt "$wait_for_end" ] || return 1
    sleep 0.05
  done
}
