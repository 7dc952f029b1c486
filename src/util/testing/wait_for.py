# SPDX-License-Identifier: MIT
"""wait_for(): a test waits for something to happen by polling the condition itself, never by
sleeping a guessed time. The C++ and shell tests have the same helper: eventually.h and
wait_for.sh beside this file. Standard library only.

Tests outside this folder put it on the path first, e.g.
    sys.path.insert(0, os.path.join(REPO, "src", "util", "testing"))
"""

import time

# The limit only ends a hung test: never a margin a loaded machine could miss.
TIMEOUT_S = 60


def wait_for(cond, timeout=TIMEOUT_S, interval=0.02):
    """Calls cond() every `interval` seconds until it returns something true, and returns that;
    after `timeout` seconds, returns its last answer."""
    end = time.monotonic() + timeout
    while True:
        v = cond()
        if v or time.monotonic() >= end:
            return v
        time.sleep(interval)
