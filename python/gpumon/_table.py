# SPDX-License-Identifier: MIT
"""The memory table of mon.log_table() (docs/python.md "A table in the log"): every interval_s
seconds, one row per GPU this process uses (its current device, and any other where torch's
allocator holds memory) with the time since the table was switched on, the step count, the
GPU's utilization, torch's allocated and reserved memory (MiB, whole) and the temperature.

- Printed from the training thread, by the gpumon call (a step, a batch fetch) that finds the
  interval passed: no thread, no timer. Nothing prints while no gpumon call runs.
- Utilization and temperature are NVML's, which only the agent calls, never the training
  thread: the node publishes its GPUs' latest readings, and the GPU it placed this process on,
  beside the agent socket (<socket>.ranks.json, node/rank_memory_file.h); the current device's
  row shows them from there, read once per print. Without that file (no agent, an agent without
  GPUs) they print as "-" (missing, never 0).
- torch is never imported here; CUDA is never initialised here (before the script has, the row
  says so). Without CUDA a row gives what is known (elapsed, step) and says why.
- tick() raises what goes wrong; the Monitor turns that into one GpumonWarning and stops it.
Not thread-safe: one training thread calls it.
"""

import json
import os
import stat
import sys
import time
from datetime import timedelta

MIB = 1024 * 1024
HEADER_EVERY = 20  # blocks between repeats of the header (vmstat-style)
_COLUMNS = (("Elapsed", 9), ("Step", 9), ("GPU", 5), ("Util%", 7), ("Alloc(MiB)", 12),
            ("Reserv(MiB)", 13), ("Temp(C)", 9))  # (name, width)


def check_interval(interval_s):
    """interval_s as a float > 0, or a ValueError a user can act on."""
    try:
        value = float(interval_s)
    except (TypeError, ValueError):
        value = float("nan")
    if not value > 0 or value == float("inf"):
        raise ValueError("the table's interval must be a number of seconds > 0, not %r"
                         % (interval_s,))
    return value


def _mib(n):
    return None if n is None else int(n) // MIB


FRESH_MS = 5000  # a table older than this is a node that stopped: its readings are not now


def node_readings(path, pid, now_ms=None):
    """(util_pct, temp_c) of the GPU the node placed process `pid` on, from the node's table at
    `path`; (None, None) when it is absent, unreadable, stale (FRESH_MS), not a regular file of
    this user (never follows a link, never waits on a FIFO: this runs on the training thread),
    or does not place the process."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as f:
            st = os.fstat(f.fileno())
            if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid():
                return None, None
            table = json.loads(f.read(1 << 22))
        now_ms = time.time() * 1000 if now_ms is None else now_ms
        if not now_ms - FRESH_MS <= table.get("written_ms", 0) <= now_ms + FRESH_MS:
            return None, None
        gpu = next((r.get("gpu") for r in table.get("ranks", ()) if r.get("pid") == pid), None)
        if gpu is None:
            return None, None
        reading = next((g for g in table.get("gpus", ()) if g.get("index") == gpu), {})
        return reading.get("util_pct"), reading.get("temperature_c")
    except (OSError, ValueError, AttributeError, TypeError):
        return None, None


def read_rows(torch, readings=(None, None)):
    """([(gpu, util_pct, allocated_mib, reserved_mib, temp_c)], note): the GPU cells now, None
    where missing; note says why there is no GPU row (else None). `readings`: the node's
    (util_pct, temp_c) of the current device's GPU."""
    if torch is None:
        return [], "torch not imported"
    cuda = getattr(torch, "cuda", None)
    if cuda is None or not cuda.is_available():
        return [], "no CUDA device"
    if not cuda.is_initialized():
        return [], "CUDA not initialised yet"
    current = cuda.current_device()
    rows = []
    for index in range(cuda.device_count()):
        stats = cuda.memory_stats(index)  # never initialises a device
        reserved = stats.get("reserved_bytes.all.current")
        if index == current or reserved:
            util, temp = readings if index == current else (None, None)
            rows.append((index, util, _mib(stats.get("allocated_bytes.all.current")),
                         _mib(reserved), temp))
    return rows, None


def _line(prefix, cells):
    text = "%-*s" % (_COLUMNS[0][1], cells[0])
    text += "".join("%*s" % (width, "-" if cell is None else cell)
                    for (_, width), cell in zip(_COLUMNS[1:], cells[1:]))
    return prefix + text.rstrip() + "\n"


def format_block(elapsed_s, steps, rows, note, prefix="gpumon: ", header=True):
    """The table's lines for one print."""
    elapsed = str(timedelta(seconds=int(elapsed_s)))
    out = _line(prefix, [name for name, _ in _COLUMNS]) if header else ""
    for row in rows:
        out += _line(prefix, (elapsed, steps) + tuple(row))
    if not rows:
        out = out + _line(prefix, (elapsed, steps, None, None, None, None, None))[:-1]
        out += "  (%s)\n" % note
    return out


class MemoryTable:
    """Prints the table to `file` (None: sys.stderr at each print) when interval_s has passed
    since the last print (the first after one interval). clock: seconds, monotonic."""

    def __init__(self, interval_s, file, clock, prefix="gpumon: ", node_file=None):
        self.interval_s = check_interval(interval_s)
        self._file = file
        self._clock = clock
        self._prefix = prefix
        self._start = clock()
        self._next = self._start + self.interval_s
        self._blocks = 0
        self._pid = os.getpid()  # a forked child (a DataLoader worker) prints nothing
        self._node_file = node_file  # the node's table (node_readings()); None: no agent

    def tick(self, steps, torch):
        """Prints when due; `steps`: the steps done so far; `torch`: the script's torch module
        (None: not imported). True when it printed."""
        now = self._clock()
        if now < self._next:
            return False
        self._next = now + self.interval_s
        if os.getpid() != self._pid:
            return False
        readings = (node_readings(self._node_file, self._pid) if self._node_file
                    else (None, None))
        rows, note = read_rows(torch, readings)
        text = format_block(now - self._start, steps, rows, note, self._prefix,
                            header=self._blocks % HEADER_EVERY == 0)
        self._blocks += 1
        out = self._file if self._file is not None else sys.stderr
        out.write(text)
        out.flush()
        return True
