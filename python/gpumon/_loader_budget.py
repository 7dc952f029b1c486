# SPDX-License-Identifier: MIT
"""What the adaptive loader (_adaptive_loader.py) may spend, and what its workers spend.

Read from Linux's /proc and the cgroup file system, never from the agent (the loader works
without one):
- CPU: the cores this process may run on (os.sched_getaffinity), shared with the other local
  ranks (LOCAL_WORLD_SIZE), less a reserve for the training process itself. A worker's CPU use
  is measured (utime + stime in /proc/<pid>/stat), so workers that mostly wait (I/O, a remote
  store) may outnumber the cores.
- RAM: a fraction of what the host and the cgroup would have free without the workers
  (MemAvailable in /proc/meminfo; cgroup v2 memory.max - memory.current, or v1
  memory.limit_in_bytes - memory.usage_in_bytes; plus what the current workers hold), shared
  with the other local ranks. A worker's memory is its PSS (/proc/<pid>/smaps_rollup): the pages it shares with
  the training process after the fork count once, split between them.

Every function returns None for what it cannot read; nothing raises. PROC and CGROUP are the
seams tests may redirect. Not thread-safe only in that the seams are module globals.
"""

import math
import os

PROC = "/proc"
CGROUP = "/sys/fs/cgroup"
_UNLIMITED = 1 << 60  # cgroup v1 writes a huge number for "no limit"


def _read(path):
    try:
        with open(path) as f:
            return f.read()
    except (OSError, ValueError):
        return None


def _int(text):
    try:
        return int(text.strip())
    except (AttributeError, ValueError):
        return None


def cores():
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def local_world_size():
    """The processes of this job on this node (LOCAL_WORLD_SIZE, else 1)."""
    value = _int(os.environ.get("LOCAL_WORLD_SIZE", ""))
    return value if value is not None and value >= 1 else 1


def cpu_seconds(pid):
    """User + system CPU seconds process `pid` has used, or None."""
    text = _read("%s/%d/stat" % (PROC, pid))
    if text is None or ")" not in text:
        return None
    fields = text[text.rindex(")") + 2:].split()  # after "pid (comm) ": state is fields[0]
    try:
        ticks = int(fields[11]) + int(fields[12])  # utime, stime: fields 14 and 15 of stat(5)
    except (IndexError, ValueError):
        return None
    return ticks / os.sysconf("SC_CLK_TCK")


def pss_bytes(pid="self"):
    """The proportional set size of process `pid` in bytes, or None."""
    text = _read("%s/%s/smaps_rollup" % (PROC, pid))
    if text is None:
        return None
    for line in text.splitlines():
        if line.startswith("Pss:"):
            parts = line.split()
            return int(parts[1]) * 1024 if len(parts) > 1 and parts[1].isdigit() else None
    return None


def python_children():
    """The pids of this process's children that run its own executable (DataLoader workers
    forked by a trainer's loader; not the gpumon agent it may have started). Read from
    /proc/self/task/*/children; [] where the kernel does not list them."""
    own = _exe("self")
    pids = []
    try:
        tasks = os.listdir(PROC + "/self/task")
    except OSError:
        return pids
    for task in tasks:
        for word in (_read("%s/self/task/%s/children" % (PROC, task)) or "").split():
            if word.isdigit() and own is not None and _exe(word) == own:
                pids.append(int(word))
    return pids


def _exe(pid):
    try:
        return os.readlink("%s/%s/exe" % (PROC, pid))
    except OSError:
        return None


def mem_available_bytes():
    text = _read(PROC + "/meminfo")
    for line in (text or "").splitlines():
        if line.startswith("MemAvailable:"):
            parts = line.split()
            return int(parts[1]) * 1024 if len(parts) > 1 and parts[1].isdigit() else None
    return None


def cgroup_room_bytes():
    """Limit - usage of this process's memory cgroup (v2, else v1); None when unlimited or
    unreadable. Looked up at the cgroup's own path, then at the mount's root (a container
    whose namespace shows its cgroup as "/")."""
    text = _read(PROC + "/self/cgroup") or ""
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        if parts[0] == "0" and parts[1] == "":
            dirs, limit_name, usage_name = [CGROUP], "memory.max", "memory.current"
        elif "memory" in parts[1].split(","):
            dirs, limit_name, usage_name = ([CGROUP + "/memory"], "memory.limit_in_bytes",
                                            "memory.usage_in_bytes")
        else:
            continue
        rel = parts[2].strip().lstrip("/")
        for root in dirs:
            for d in ([os.path.join(root, rel)] if rel else []) + [root]:
                limit = _read(os.path.join(d, limit_name))
                if limit is None:
                    continue
                if limit.strip() == "max":
                    return None
                limit, usage = _int(limit), _int(_read(os.path.join(d, usage_name)))
                if limit is None or limit >= _UNLIMITED or usage is None:
                    return None
                return max(limit - usage, 0)
    return None


def budgets(reserve_cores, ram_fraction, workers_pss_bytes=0):
    """The CPU cores and RAM bytes the loader's workers may use now, with what they came from.

    cpu_budget_cores = cores / local ranks - reserve_cores (at least 0.5);
    ram_budget_bytes = ram_fraction * (free + workers_pss_bytes) / local ranks, where free is
    the smaller of MemAvailable and the cgroup's room, and workers_pss_bytes what the current
    workers hold (free would grow by it without them); None when neither can be read.
    """
    n, ranks = cores(), local_world_size()
    cpu = max(n / ranks - reserve_cores, 0.5)
    free = [v for v in (mem_available_bytes(), cgroup_room_bytes()) if v is not None]
    ram = None
    if free:
        ram = int(ram_fraction * (min(free) + int(workers_pss_bytes or 0)) / ranks)
    return {"cores": n, "local_world_size": ranks, "cpu_budget_cores": round(cpu, 3),
            "ram_budget_bytes": ram}


def workers_allowed(budget, load_cpu_s_per_batch, production_s_per_batch, pss_per_worker):
    """The most workers the budgets allow: as many as fit the CPU budget when each works at
    full speed (load_cpu_s_per_batch of CPU per production_s_per_batch of wall time), and as
    many as fit the RAM budget at pss_per_worker bytes each. None: no limit known."""
    limits = []
    if load_cpu_s_per_batch and production_s_per_batch and load_cpu_s_per_batch > 1e-5:
        # A worker runs one thread of loading (torch sets it to one intra-op thread).
        cores_per_worker = min(load_cpu_s_per_batch / production_s_per_batch, 1.0)
        limits.append(int(math.floor(budget["cpu_budget_cores"] / cores_per_worker + 1e-6)))
    if budget.get("ram_budget_bytes") is not None and pss_per_worker:
        limits.append(int(budget["ram_budget_bytes"] // pss_per_worker))
    return min(limits) if limits else None
