# SPDX-License-Identifier: MIT
"""One rank of the OOM guard's 2-rank gloo DDP test (test_oom_guard.py): RANK, WORLD_SIZE,
MASTER_ADDR and MASTER_PORT from the environment as torchrun sets them; argv[1] is the largest
micro-batch this rank's planted allocator takes (0: no limit), argv[2] the floor (default 1); a stand-in memory probe predicts
an OOM on rank 1 alone after step 2. Prints one JSON line: the
micro-batch sizes, the actions and the weights, or the OOM raised at the floor."""
import faulthandler
import json
import signal
import os
import sys

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from oom_guard_models import BATCH, STEPS, Planted, batch_of, loss_of  # noqa: E402

import gpumon  # noqa: E402


class Probe:
    """A stand-in for the CUDA allocator's figures: plenty of headroom, except on rank 1 after
    step 2 (40 bytes left of 1000, under the 10 % margin): only rank 1 predicts an OOM."""

    def __init__(self, rank):
        self.rank, self.calls = rank, 0

    def __call__(self):
        peak = 910 if self.rank == 1 and self.calls == 2 else 300
        self.calls += 1
        return {"total_bytes": 1000, "outside_bytes": 50, "reserved_bytes": peak,
                "allocated_bytes": 100, "peak_reserved_bytes": peak,
                "peak_allocated_bytes": peak, "num_alloc_retries": 0}


def train(rank, limit, floor):
    torch.manual_seed(0)
    model = Planted(limit or None)
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
    guard = gpumon.Monitor().oom_guard(ddp, min_micro_batch_size=floor, memory_probe=Probe(rank),
                                       probe_every=1, headroom_margin=0.1,
                                       hysteresis_steps=1000)
    sizes = []
    for step in range(STEPS):
        opt.zero_grad()
        guard.run(batch_of(step, rank), lambda mb: loss_of(ddp, mb))
        opt.step()
        sizes.append(guard.micro_batch_size)
    weights = [p.detach().reshape(-1).tolist() for p in model.parameters()]
    return {"rank": rank, "sizes": sizes, "actions": guard.actions, "weights": weights,
            "seen": int(model.seen), "batch": BATCH}


def main():
    faulthandler.register(signal.SIGUSR1)  # a hang shows where: kill -USR1
    dist.init_process_group("gloo")
    rank, floor = dist.get_rank(), int(sys.argv[2]) if len(sys.argv) > 2 else 1
    try:
        result = train(rank, int(sys.argv[1]), floor)
    except torch.cuda.OutOfMemoryError as e:  # at the floor
        result = {"rank": rank, "raised": str(e)}
    print(json.dumps(result), flush=True)
    # DDP's reducer is gone with train()'s frame before its process group: destroying the
    # group first hung one run in five at exit on a loaded 2-core machine.
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
