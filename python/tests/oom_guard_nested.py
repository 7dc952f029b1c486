# SPDX-License-Identifier: MIT
"""One rank of the OOM guard's 2-rank gloo test of Lightning's DDP shape (test_oom_guard.py):
the guard runs inside DistributedDataParallel.forward, as a LightningModule's training_step
does under a DDP strategy. RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT from the environment;
argv[1] is the largest micro-batch this rank's planted allocator takes (0: no limit). The model
has a parameter no rank uses and a BatchNorm. A comm hook counts DDP's own bucket all-reduces
(there must be none: the guard averages the gradients). Prints one JSON line."""
import json
import os
import sys

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from oom_guard_models import OOM_MESSAGE, batch_of  # noqa: E402

import gpumon  # noqa: E402

STEPS = 5


class Module(torch.nn.Module):
    """training_step's shape under Lightning: DDP.forward(batch) -> guard.run(...)."""

    def __init__(self, limit):
        super().__init__()
        self.limit = limit
        self.lin = torch.nn.Linear(8, 4)
        self.norm = torch.nn.BatchNorm1d(4)
        self.unused = torch.nn.Linear(8, 4)
        self.guard = None

    def loss(self, micro_batch):
        x, y = micro_batch
        if self.limit and x.shape[0] > self.limit:
            raise torch.cuda.OutOfMemoryError(OOM_MESSAGE)
        return torch.nn.functional.mse_loss(self.norm(self.lin(x)), y)

    def forward(self, batch):
        return self.guard.run(batch, self.loss)


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    module = Module(int(sys.argv[1]))
    ddp = torch.nn.parallel.DistributedDataParallel(module, broadcast_buffers=False)
    module.guard = gpumon.Monitor().oom_guard(ddp, predict=False)
    calls = [0]

    def hook(state, bucket):
        calls[0] += 1
        fut = torch.futures.Future()
        fut.set_result(bucket.buffer())
        return fut

    ddp.register_comm_hook(None, hook)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
    for step in range(STEPS):
        opt.zero_grad(set_to_none=True)
        ddp(batch_of(step, rank))
        unused_grad = module.unused.weight.grad
        opt.step()
    print(json.dumps({
        "rank": rank, "reducer_calls": calls[0], "size": module.guard.micro_batch_size,
        "unused_grad_is_none": unused_grad is None,
        "weights": [p.detach().reshape(-1).tolist() for p in (module.lin.weight, module.lin.bias)],
        "batches_tracked": int(module.norm.num_batches_tracked)}), flush=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
