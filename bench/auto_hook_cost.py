# SPDX-License-Identifier: MIT
"""CPU cost of the zero-code hooks (gpumon/_auto.py) against gpumon's three lines, per step
(target: within 1 us a step of the explicit API; docs/PERFORMANCE.md "Zero-code hooks").

One process, one agent (GPUMON_AGENT_SOCKET or the default one, started when absent), a real
DataLoader (num_workers=0) and an SGD step per training step, paced by --pace-us of sleep (as
step_cost.py: every arm sleeps alike). Blocks of --calls steps alternate between the arms:
  explicit  `for b in mon.wrap(loader): ...; opt.step(); mon.step()`, the hooks standing back
  hooks     `for b in loader: ...; opt.step()`, the hooks counting
  none      the same loop without gpumon (the hooks installed but standing back: their
            pass-through is in this arm and in `explicit`)
and the thread CPU time per step is compared by pairs of blocks: median with a 95 % bootstrap
interval (MEASURING.md).
usage: auto_hook_cost.py [--calls N] [--blocks B] [--pace-us U] [--out FILE.json]
"""
import argparse
import os
import random
import statistics
import sys
import time

import torch
from torch.utils.data import DataLoader, TensorDataset

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_agent import emit  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import gpumon  # noqa: E402,F401
from gpumon import _auto, _monitor  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("--calls", type=int, default=2000)
p.add_argument("--blocks", type=int, default=15)
p.add_argument("--pace-us", type=float, default=300.0)
p.add_argument("--out", default=None)
a = p.parse_args()

_auto.install()
param = torch.zeros(4, requires_grad=True)
param.grad = torch.zeros(4)
opt = torch.optim.SGD([param], lr=0.0)
loader = DataLoader(TensorDataset(torch.zeros(a.calls, 4)), batch_size=1)
for _ in loader:  # the hooks make their Monitor at the first batch, and count from there
    opt.step()
    break
hooks = (_auto._step, _auto._add_wait)
mon = _auto._mon
if mon is None or not mon.active:
    sys.exit("gpumon is not active (no agent, no _gpumon module): nothing to measure")
pace = a.pace_us / 1e6
sleep = time.sleep


def hooks_on(on):
    _auto._off = not on
    _auto._step, _auto._add_wait = hooks if on else (None, None)


def run(arm):
    hooks_on(arm == "hooks")
    began = time.thread_time()
    if arm == "explicit":
        for _ in mon.wrap(loader):
            opt.step()
            mon.step()
            sleep(pace)
    else:
        for _ in loader:
            opt.step()
            sleep(pace)
    spent = time.thread_time() - began
    hooks_on(False)
    mon.flush()
    return spent / a.calls * 1e6


arms = ["explicit", "hooks", "none"]
per_block = {arm: [] for arm in arms}
for _ in range(a.blocks):
    for arm in random.sample(arms, len(arms)):
        per_block[arm].append(run(arm))


def bootstrap(diffs, n=2000):
    medians = sorted(statistics.median(random.choices(diffs, k=len(diffs))) for _ in range(n))
    return [round(medians[int(0.025 * n)], 3), round(medians[int(0.975 * n)], 3)]


out = {"calls": a.calls, "blocks": a.blocks, "pace_us": a.pace_us,
       "cpu_us_per_step": {arm: round(statistics.median(v), 3) for arm, v in per_block.items()}}
for x, y in (("hooks", "explicit"), ("explicit", "none"), ("hooks", "none")):
    diffs = [h - e for h, e in zip(per_block[x], per_block[y])]
    out["%s_minus_%s_us" % (x, y)] = {"median": round(statistics.median(diffs), 3),
                                      "ci95": bootstrap(diffs)}
out["steps_sent"] = mon.stats().get("sent")
mon.close()
emit(out, a.out)
