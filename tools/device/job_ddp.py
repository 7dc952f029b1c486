# SPDX-License-Identifier: MIT
"""One rank of a gloo DDP job on cuda:0 (every rank shares the one GPU: gloo allows it, NCCL
does not), instrumented with gpumon's three lines. tools/device/jobs_h200.sh runs two of them,
each under its own `gpumon record` playing a node.
usage: RANK=r WORLD_SIZE=n MASTER_ADDR=... MASTER_PORT=... python job_ddp.py STEPS
JOB_DEVICE=cpu for a dry run without a GPU."""
import os
import sys

import torch
import torch.distributed as dist

import gpumon

steps = int(sys.argv[1])
dist.init_process_group("gloo")
dev = torch.device(os.environ.get("JOB_DEVICE", "cuda:0"))
torch.manual_seed(0)
width = 4096 if dev.type == "cuda" else 256
model = torch.nn.Sequential(*[torch.nn.Linear(width, width) for _ in range(4)]).to(dev)
ddp = torch.nn.parallel.DistributedDataParallel(
    model, device_ids=[0] if dev.type == "cuda" else None)
opt = torch.optim.SGD(ddp.parameters(), lr=1e-3)
x = torch.randn(512, width, device=dev)
mon = gpumon.start()
for i in range(steps):
    loss = ddp(x).square().mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    mon.step()
if dev.type == "cuda":
    torch.cuda.synchronize()
dist.destroy_process_group()
print("done", steps, flush=True)
