# SPDX-License-Identifier: MIT
"""Training runs with one planted problem each, for the diagnoses' real labelled cases.

Run under `gpumon record -o RUN.gpumon --interval 100 -- python3 tools/device/planted.py KIND`
on a CUDA machine; the recording then holds the GPU samples and this process's steps (the three
gpumon lines are in the loop). Under torchrun every rank runs the same KIND.

KIND (what the run does, and the finding it should produce):
  healthy        bf16 GEMM steps of ~2 ms, data already on the GPU: no finding
  healthy-long   ~30 ms steps of the same (160 products): no finding
  slow-loader    a DataLoader with one worker that needs ~40 ms per batch against ~10 ms of
                 GPU work: data_loader_stall
  launch-bound   a 48-layer 64-wide MLP, a host sync each step: launch_bound
  leak           every 100 ms a step keeps 256 MiB alive in a list (a history kept by
                 mistake), ~64 GiB over 25 s: memory_leak (and oom_forecast)
  cache          the allocator caches 20 GiB freed after warm-up, allocated stays flat:
                 allocator_cache (info) only
  fragmentation  a per-process cap of 13 GiB; 24 cached 512 MiB blocks each split by a kept
                 300 MiB tensor (5 GiB inactive split), then every step asks for 1.5 GiB, which
                 only the split blocks could give: alloc retries and caught OOMs: fragmentation
  near-oom       every 100 ms memory grows by 0.4 % of the GPU's total, up to 93 % at the end
                 of the run: oom_forecast
  imbalance      (2 ranks) rank 1 does 2x the work of rank 0 each step, then they all-reduce:
                 straggler rank 1 / rank_wait on rank 0
  ddp-healthy    (2 ranks) equal work and an all-reduce: no finding
usage: planted.py KIND [--seconds S]
"""
import argparse
import os
import sys
import time

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import gpumon  # noqa: E402

KINDS = ["healthy", "healthy-long", "slow-loader", "launch-bound", "leak", "cache",
         "fragmentation", "near-oom", "imbalance", "ddp-healthy"]
p = argparse.ArgumentParser()
p.add_argument("kind", choices=KINDS)
p.add_argument("--seconds", type=float, default=30.0)
a = p.parse_args()

rank = int(os.environ.get("RANK", "0"))
world = int(os.environ.get("WORLD_SIZE", "1"))
local = int(os.environ.get("LOCAL_RANK", "0"))
torch.cuda.set_device(local)
dev = torch.device("cuda", local)
if world > 1:
    dist.init_process_group("nccl")

GiB = 1 << 30
MiB = 1 << 20


def gemm_step(n, reps):
    x = A
    for _ in range(reps):
        x = (x @ B).clamp_(-1, 1)
    return x


class SlowSet(torch.utils.data.Dataset):
    def __len__(self):
        return 1 << 30

    def __getitem__(self, i):
        time.sleep(0.04)  # decoding/augmenting on the CPU, too slow for one worker
        return torch.randn(256, 256)


def batches():
    """The loader each kind iterates (data on the GPU already, except slow-loader)."""
    if a.kind == "slow-loader":
        return torch.utils.data.DataLoader(SlowSet(), batch_size=1, num_workers=1)
    x = torch.randn(64, 64, device=dev)
    return iter(lambda: x, None)


A = torch.randn(4096, 4096, device=dev, dtype=torch.bfloat16)
B = torch.randn(4096, 4096, device=dev, dtype=torch.bfloat16)
mlp = None
if a.kind == "launch-bound":
    layers = []
    for _ in range(48):
        layers += [torch.nn.Linear(64, 64), torch.nn.ReLU()]
    mlp = torch.nn.Sequential(*layers).to(dev)
    opt = torch.optim.SGD(mlp.parameters(), lr=1e-4)
kept = []  # the leak
cache_done = False
frag_keep = []
if a.kind == "fragmentation":
    cap = 13 * GiB / torch.cuda.get_device_properties(dev).total_memory
    torch.cuda.set_per_process_memory_fraction(cap, dev)
total = torch.cuda.get_device_properties(dev).total_memory
grow = []
grad = torch.zeros(8 * MiB, device=dev)

mon = gpumon.start()
next_grow = time.time()
print("rank", rank, "monitor active", mon.active, flush=True)
end = time.time() + a.seconds
step = 0
stop = torch.zeros(1, device=dev)
for batch in mon.wrap(batches()):
    if world > 1:  # every rank stops at the same step, or the last all-reduce would hang
        stop.fill_(float(time.time() > end))
        dist.all_reduce(stop, op=dist.ReduceOp.MAX)
        if stop.item() > 0:
            break
    elif time.time() > end:
        break
    if a.kind == "healthy":
        gemm_step(4096, 8)
    elif a.kind == "healthy-long":
        gemm_step(4096, 160)
    elif a.kind == "slow-loader":
        batch = batch.to(dev, non_blocking=True)
        gemm_step(4096, 4)
    elif a.kind == "launch-bound":
        opt.zero_grad(set_to_none=True)
        mlp(batch).square().mean().backward()
        opt.step()
    elif a.kind == "leak":
        gemm_step(4096, 4)
        if time.time() >= next_grow:
            next_grow += 0.1
            kept.append(torch.empty(256 * MiB // 4, device=dev).fill_(float(step)))  # forever
    elif a.kind == "cache":
        if not cache_done and step == 20:  # a warm-up that needed 20 GiB, then freed
            tmp = [torch.empty(GiB // 4, device=dev) for _ in range(20)]
            del tmp
            cache_done = True
        gemm_step(4096, 8)
    elif a.kind == "fragmentation":
        if step == 20:  # after a warm-up: the split blocks
            blocks = [torch.empty(512 * MiB // 4, device=dev) for _ in range(24)]
            del blocks  # cached, not returned
            frag_keep = [torch.empty(300 * MiB // 4, device=dev) for _ in range(24)]
        if step >= 20:
            try:
                big = torch.empty(int(1.5 * GiB) // 4, device=dev)
                del big
            except torch.cuda.OutOfMemoryError:
                pass  # the retry and the failure are what the allocator counts
        gemm_step(4096, 4)
    elif a.kind == "near-oom":
        if time.time() >= next_grow:
            next_grow += 0.1
            free, _ = torch.cuda.mem_get_info(dev)
            if total - free < 0.93 * total:
                grow.append(torch.empty(int(0.004 * total) // 4, device=dev))
        gemm_step(4096, 8)
    elif a.kind in ("imbalance", "ddp-healthy"):
        reps = 16 if (a.kind == "imbalance" and rank == 1) else 8
        gemm_step(4096, reps)
        dist.all_reduce(grad)
    torch.cuda.synchronize()  # as loss.item() does
    mon.step()
    step += 1
print("rank", rank, "steps", step, "client", mon.stats(), flush=True)
mon.close()
if world > 1:
    dist.destroy_process_group()
