# SPDX-License-Identifier: MIT
"""What the OOM guard costs a training step when no OOM happens (target: <= 0.5 % of a step).

A plain loop (an MLP's forward, backward and SGD step on pre-made batches) runs in three arms:
  plain    loss = forward(batch); loss.backward()
  guard    loss = guard.run(batch, forward)  (mon.oom_guard on an inactive monitor: the guard's
           own work, nothing sent)
  control  the plain arm again: the negative control, so the noise floor is visible
Blocks of --steps steps per arm, the arms in a random order in each block, --blocks blocks. Per
block: CPU time of this thread per step (torch runs on this thread: torch.set_num_threads(1)),
and each arm's slowdown against that block's plain arm. Printed as JSON: the median step time,
the median slowdown of guard and control in % with 95 % bootstrap intervals, and the guard's
extra CPU time per step in microseconds. Then the guard's own CPU time per step measured alone
(around a forward that returns a ready scalar), which the training's noise does not blur, and
its share of the plain step.
On CUDA (--device cuda) the guard's default memory probe runs every probe_every steps (10) and
the time is wall time after a synchronize per block.
usage: oom_guard_overhead.py [--steps N] [--blocks B] [--batch B] [--width W] [--device cpu|cuda]
  [--out FILE.json]
"""
import argparse
import os
import platform
import random
import statistics
import subprocess
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import gpumon  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("--steps", type=int, default=200)
p.add_argument("--blocks", type=int, default=30)
p.add_argument("--batch", type=int, default=64)
p.add_argument("--width", type=int, default=512)
p.add_argument("--device", default="cpu")
p.add_argument("--out", default=None)
a = p.parse_args()

torch.set_num_threads(1)
torch.manual_seed(0)
device = torch.device(a.device)
model = torch.nn.Sequential(
    torch.nn.Linear(a.width, a.width), torch.nn.ReLU(), torch.nn.Linear(a.width, a.width),
    torch.nn.ReLU(), torch.nn.Linear(a.width, 10)).to(device)
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
batches = [(torch.randn(a.batch, a.width, device=device),
            torch.randint(0, 10, (a.batch,), device=device)) for _ in range(16)]
guard = gpumon.Monitor().oom_guard(model)
loss_fn = torch.nn.functional.cross_entropy


def forward(mb):
    x, y = mb
    return loss_fn(model(x), y)


def plain(b):
    loss = forward(b)
    loss.backward()
    return loss.detach()


def guarded(b):
    return guard.run(b, forward)


ARMS = {"plain": plain, "guard": guarded, "control": plain}
clock = time.thread_time if a.device == "cpu" else time.perf_counter


def block(step_fn):
    if a.device == "cuda":
        torch.cuda.synchronize()
    start = clock()
    for i in range(a.steps):
        opt.zero_grad()
        step_fn(batches[i % len(batches)])
        opt.step()
    if a.device == "cuda":
        torch.cuda.synchronize()
    return (clock() - start) / a.steps


def bootstrap(values, n=2000):
    medians = sorted(statistics.median(random.choices(values, k=len(values))) for _ in range(n))
    return [round(medians[int(0.025 * n)], 4), round(medians[int(0.975 * n)], 4)]


for fn in ARMS.values():  # warm-up
    block(fn)
per_block = {arm: [] for arm in ARMS}
for _ in range(a.blocks):
    for arm in random.sample(list(ARMS), len(ARMS)):
        per_block[arm].append(block(ARMS[arm]))

out = {"machine": platform.node(), "cpu": platform.processor() or platform.machine(),
       "torch": torch.__version__, "device": a.device, "batch": a.batch, "width": a.width,
       "steps_per_block": a.steps, "blocks": a.blocks,
       "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
       "clock": "thread CPU time" if a.device == "cpu" else "wall time",
       "step_ms_median": {arm: round(statistics.median(v) * 1e3, 4)
                          for arm, v in per_block.items()}}
try:
    out["commit"] = subprocess.check_output(
        ["git", "-C", os.path.dirname(os.path.abspath(__file__)), "rev-parse", "--short",
         "HEAD"], text=True).strip()
except Exception:
    out["commit"] = None
for arm in ("guard", "control"):
    slowdown = [100.0 * (x / y - 1) for x, y in zip(per_block[arm], per_block["plain"])]
    extra_us = [1e6 * (x - y) for x, y in zip(per_block[arm], per_block["plain"])]
    out["%s_slowdown_pct" % arm] = {"median": round(statistics.median(slowdown), 4),
                                    "ci95": bootstrap(slowdown)}
    out["%s_extra_us_per_step" % arm] = {"median": round(statistics.median(extra_us), 3),
                                         "ci95": bootstrap(extra_us)}


# The guard's own CPU time per step, without the training's noise: run() around a forward that
# returns a ready scalar (its backward is a one-node graph), against the same forward and
# backward called directly; pairs of blocks, median of the differences.
leaf = torch.zeros((), requires_grad=True)
tiny_guard = gpumon.Monitor().oom_guard(torch.nn.Linear(1, 1))


def tiny_forward(mb):
    return leaf * 1.0


def tiny_block(with_guard, n=2000):
    start = time.thread_time()
    if with_guard:
        for _ in range(n):
            tiny_guard.run(batches[0], tiny_forward)
    else:
        for _ in range(n):
            loss = tiny_forward(batches[0])
            loss.backward()
            loss.detach()
    return (time.thread_time() - start) / n


own = []
for _ in range(a.blocks):
    order = random.sample([True, False], 2)
    got = {g: tiny_block(g) for g in order}
    own.append(1e6 * (got[True] - got[False]))
out["guard_own_us_per_step"] = {"median": round(statistics.median(own), 3),
                                "ci95": bootstrap(own)}
out["guard_own_pct_of_plain_step"] = round(
    statistics.median(own) / (1e4 * statistics.median(per_block["plain"])) , 4)
out["raw_step_s"] = per_block
out["raw_guard_own_us"] = own
text = __import__("json").dumps(out, indent=1)
print(text)
if a.out:
    with open(a.out, "w") as f:
        f.write(text + "\n")
