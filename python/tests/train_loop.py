# SPDX-License-Identifier: MIT
"""A small real training loop with gpumon's three lines, run by test_gpumon.py in a subprocess.

usage: train_loop.py STEPS [--item-sleep S] [--step-sleep S] [--with] [--worker-misuse]
                           [--mem] [--gpu-timer] [--flag FILE]
Prints "pid N", then "done STEPS WARNINGS" where WARNINGS counts GpumonWarnings, and each
warning's text on its own line ("warning: ...").
"""
import argparse
import os
import sys
import time
import warnings

import torch
from torch.utils.data import DataLoader, Dataset

import gpumon

args = argparse.ArgumentParser()
args.add_argument("steps", type=int)
args.add_argument("--item-sleep", type=float, default=0.0)
args.add_argument("--step-sleep", type=float, default=0.0)
args.add_argument("--with", dest="with_form", action="store_true")
args.add_argument("--worker-misuse", action="store_true")
args.add_argument("--mem", action="store_true")
args.add_argument("--gpu-timer", action="store_true")
args.add_argument("--flag", default=None, help="a file created after the 5th step")
a = args.parse_args()

MON = None


class Slow(Dataset):
    def __len__(self):
        return a.steps * 2

    def __getitem__(self, i):
        time.sleep(a.item_sleep)
        if a.worker_misuse:  # a worker (forked child) using the parent's monitor: must do nothing
            MON.step()
            with MON.step():
                pass
            MON._client.send('{"type":"step","step":999999,"t_start":1,"t_end":2,"cpu_step_s":1}')
        return torch.full((4,), float(i))


class FakeGpuTimer:
    """Stands in for CUDA events (gpumon._monitor._CudaTimer): the i-th step read took
    (i + 1) ms on the GPU."""

    def __init__(self):
        self.recorded = self.read = 0

    def record(self):
        self.recorded += 1
        return self.recorded % 8  # a slot, as the real timer's ring

    def elapsed(self, begun, ended):
        self.read += 1
        return self.read / 1000.0


warnings.simplefilter("always")
with warnings.catch_warnings(record=True) as caught:
    MON = gpumon.start()
    if a.mem:
        calls = []

        def memory_stats():
            calls.append(1)
            return {"allocated_bytes.all.current": 1000 + len(calls),
                    "reserved_bytes.all.current": 4096, "active_bytes.all.current": 900,
                    "inactive_split_bytes.all.current": 100, "allocated_bytes.all.peak": 5000,
                    "reserved_bytes.all.peak": 8192, "num_alloc_retries": 1, "num_ooms": 0}

        MON._configure(mem_fn=memory_stats, mem_interval=0.0)
    if a.gpu_timer:
        # every step (default: at most every 0.1 s)
        MON._configure(gpu_timer=FakeGpuTimer(), gpu_interval=0.0)
    print("pid", os.getpid(), flush=True)
    loader = DataLoader(Slow(), batch_size=2, num_workers=2, multiprocessing_context="fork")
    model = torch.nn.Linear(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    done = 0
    for batch in MON.wrap(loader):
        if a.with_form:
            with MON.step():
                loss = model(batch).pow(2).mean()
                opt.zero_grad()
                loss.backward()
                opt.step()
                time.sleep(a.step_sleep)
        else:
            loss = model(batch).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            time.sleep(a.step_sleep)
            MON.step()
        done += 1
        if done == 5 and a.flag:
            open(a.flag, "w").close()
    MON.close()
ours = [w for w in caught if issubclass(w.category, gpumon.GpumonWarning)]
for w in ours:
    print("warning:", w.message, flush=True)
print("done", done, len(ours), flush=True)
sys.exit(0)
