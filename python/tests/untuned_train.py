# SPDX-License-Identifier: MIT
"""A small CPU training loop with gpumon's explicit API and one planted problem, run by
test_untuned_runs.py under `gpumon record` (real runs the diagnoses were not tuned on).

usage: untuned_train.py STEPS [--pause-every N --pause-s S] [--hang-after N]
                              [--start-before-torch] [--slow-batch-every N --slow-batch-s S]
                              [--batch-s S]
--pause-every: every N-th step also saves a checkpoint and sleeps S seconds (a slow save);
--hang-after: after N steps prints "hung" and waits forever (a stuck collective) until Ctrl-C;
--start-before-torch: gpumon.start() before `import torch` (the hello names no device);
--batch-s: every batch takes S seconds to load (a slow loader: every step waits);
--slow-batch-every: every N-th batch takes S seconds more (a shard boundary: a few long waits).
"""
import argparse
import os
import sys
import tempfile
import time

p = argparse.ArgumentParser()
p.add_argument("steps", type=int)
p.add_argument("--pause-every", type=int, default=0)
p.add_argument("--pause-s", type=float, default=0.3)
p.add_argument("--hang-after", type=int, default=0)
p.add_argument("--start-before-torch", action="store_true")
p.add_argument("--batch-s", type=float, default=0.0)
p.add_argument("--slow-batch-every", type=int, default=0)
p.add_argument("--slow-batch-s", type=float, default=0.3)
a = p.parse_args()

import gpumon  # noqa: E402

mon = gpumon.start() if a.start_before_torch else None
import torch  # noqa: E402

if mon is None:
    mon = gpumon.start()
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Linear(256, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
checkpoint = os.path.join(tempfile.mkdtemp(), "model.pt")


def batches():
    for i in range(a.steps):
        time.sleep(a.batch_s)
        if a.slow_batch_every and i % a.slow_batch_every == a.slow_batch_every - 1:
            time.sleep(a.slow_batch_s)
        yield torch.randn(32, 64), torch.randn(32, 1)


for step, (x, y) in enumerate(mon.wrap(batches())):
    with mon.step():
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        opt.step()
        if a.pause_every and step % a.pause_every == a.pause_every - 1:
            torch.save(model.state_dict(), checkpoint)
            time.sleep(a.pause_s)
    if a.hang_after and step + 1 == a.hang_after:
        print("hung", flush=True)
        while True:
            time.sleep(3600)
print("done", a.steps, flush=True)
sys.exit(0)
