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
--norms N puts N BatchNorm1d layers in the model (a Linear, a BatchNorm1d and a ReLU each; a
ResNet-50 has 53): the guard saves their running statistics before every step, so this is the
arm that shows that cost; the guard-alone measurement then guards a model with N of them too,
on the same device (on CUDA its memory probe then runs in that measurement as well).
--model resnet50 trains a ResNet-50 (written here: torchvision is not on every machine; 53
BatchNorm2d layers) on --batch random 3x--image x--image images and 1000 classes instead of the
MLP (--width and --norms do not apply; the guard-alone measurement guards the ResNet itself):
the step of a real vision model, for CUDA.
On CUDA (--device cuda) the guard's default memory probe runs every probe_every steps (10) and
the time is wall time after a synchronize per block.
usage: oom_guard_overhead.py [--steps N] [--blocks B] [--batch B] [--width W] [--norms N]
  [--model mlp|resnet50] [--image PIXELS] [--device cpu|cuda] [--out FILE.json]
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
p.add_argument("--norms", type=int, default=0)
p.add_argument("--model", choices=["mlp", "resnet50"], default="mlp")
p.add_argument("--image", type=int, default=224)
p.add_argument("--device", default="cpu")
p.add_argument("--out", default=None)
a = p.parse_args()

torch.set_num_threads(1)
torch.manual_seed(0)
device = torch.device(a.device)


def normed(n, width):
    """n blocks of Linear, BatchNorm1d, ReLU (none: the plain MLP's two hidden layers)."""
    layers = []
    for _ in range(n):
        layers += [torch.nn.Linear(width, width), torch.nn.BatchNorm1d(width), torch.nn.ReLU()]
    return layers


class Bottleneck(torch.nn.Module):
    """ResNet's bottleneck block: 1x1, 3x3 (stride), 1x1 convolutions, each with a BatchNorm2d,
    and a projection (a 1x1 convolution and a BatchNorm2d) where the shape changes."""

    def __init__(self, cin, mid, stride):
        super().__init__()
        cout = mid * 4
        c = torch.nn.Conv2d
        b = torch.nn.BatchNorm2d
        self.body = torch.nn.Sequential(
            c(cin, mid, 1, bias=False), b(mid), torch.nn.ReLU(inplace=True),
            c(mid, mid, 3, stride, 1, bias=False), b(mid), torch.nn.ReLU(inplace=True),
            c(mid, cout, 1, bias=False), b(cout))
        self.skip = (torch.nn.Sequential(c(cin, cout, 1, stride, bias=False), b(cout))
                     if stride != 1 or cin != cout else torch.nn.Identity())

    def forward(self, x):
        return torch.relu(self.body(x) + self.skip(x))


def resnet50():
    layers = [torch.nn.Conv2d(3, 64, 7, 2, 3, bias=False), torch.nn.BatchNorm2d(64),
              torch.nn.ReLU(inplace=True), torch.nn.MaxPool2d(3, 2, 1)]
    cin = 64
    for mid, blocks, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
        for i in range(blocks):
            layers.append(Bottleneck(cin, mid, stride if i == 0 else 1))
            cin = mid * 4
    return torch.nn.Sequential(*layers, torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(),
                               torch.nn.Linear(cin, 1000))


if a.model == "resnet50":
    model = resnet50().to(device)
    a.norms = sum(isinstance(m, torch.nn.BatchNorm2d) for m in model.modules())
    a.width = None
    batches = [(torch.randn(a.batch, 3, a.image, a.image, device=device),
                torch.randint(0, 1000, (a.batch,), device=device)) for _ in range(4)]
else:
    hidden = normed(a.norms, a.width) if a.norms else [
        torch.nn.Linear(a.width, a.width), torch.nn.ReLU(), torch.nn.Linear(a.width, a.width),
        torch.nn.ReLU()]
    model = torch.nn.Sequential(*hidden, torch.nn.Linear(a.width, 10)).to(device)
    batches = [(torch.randn(a.batch, a.width, device=device),
                torch.randint(0, 10, (a.batch,), device=device)) for _ in range(16)]
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
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
       "torch": torch.__version__, "device": a.device, "model": a.model, "batch": a.batch,
       "width": a.width, "image": a.image if a.model == "resnet50" else None, "norms": a.norms,
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
tiny_guard = gpumon.Monitor().oom_guard(
    model if a.model == "resnet50" else
    torch.nn.Sequential(torch.nn.Linear(1, 1), *normed(a.norms, 1)).to(device))


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
