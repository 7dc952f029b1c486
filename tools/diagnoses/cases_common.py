# SPDX-License-Identifier: MIT
"""Small helpers the case definitions share: expectations, deterministic noise, step plans."""
import random

from case_model import GIB, MIB  # noqa: F401 (re-exported for the case files)


def expect(findings=(), forbidden=(), allowed=(), max_health=None, min_health=None):
    """expected.json. Healthy (no finding at warning or above): health 90-100; otherwise at
    most 95 (a warning deducts) and no lower bound."""
    healthy = not [f for f in findings if f.get("severity", "warning") != "info"]
    out = {"findings": list(findings), "forbidden": list(forbidden)}
    if allowed:
        out["allowed"] = list(allowed)
    out["max_health"] = max_health if max_health is not None else (100 if healthy else 95)
    out["min_health"] = min_health if min_health is not None else (90 if healthy else 0)
    return out


def finding(id_, gpus=None, ranks=None, severity=None, mentions=None):
    f = {"id": id_}
    if gpus is not None:
        f["gpus"] = gpus
    if ranks is not None:
        f["ranks"] = ranks
    if severity is not None:
        f["severity"] = severity
    if mentions is not None:
        f["mentions"] = mentions
    return f


def hnoise(t, amp, salt=0):
    """Uniform noise in [-amp, amp], the same for the same time (ms) and salt."""
    return random.Random(int(round(t * 1000)) * 7919 + salt).uniform(-amp, amp)


def same_for_all(n, wait, compute, host=0.004, run=None, rel=0.02):
    """A plan: every rank waits `wait` and computes `compute` (jittered by `rel` when run given)."""
    def plan(k, t):
        c = run.jitter(compute, rel) if run else compute
        return [{"wait": wait, "compute": c, "host": host} for _ in range(n)]
    return plan


def mem_stats(allocated, reserved, peak=None, inactive_split=None, retries=0, ooms=0):
    return {"allocated": int(allocated), "reserved": int(reserved), "active": int(allocated),
            "inactive_split": int(inactive_split if inactive_split is not None else 48 * MIB),
            "allocated_peak": int(peak if peak is not None else min(reserved, allocated + GIB)),
            "reserved_peak": int(reserved), "num_alloc_retries": int(retries),
            "num_ooms": int(ooms)}


def round_up(x, block):
    return -(-int(x) // block) * block
