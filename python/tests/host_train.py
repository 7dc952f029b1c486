# SPDX-License-Identifier: MIT
"""A CPU training run for the host-side diagnoses (test_host.py), under `gpumon record`.

    host_train.py [--leak-mb M] [--workers N] [--min-steps N] [--min-seconds S]
    host_train.py --nprocs 2 --heavy-rank 1 --heavy-factor 3 [...]    # 2 gloo DDP ranks

--leak-mb: the Dataset keeps M MB of bytes for every batch it makes (in the DataLoader's
workers with --workers > 0): the copy-on-write host-memory growth of a Dataset that keeps what it loads. Each step sleeps 0.1 s, so a
leak grows by at most ~10 x M MB/s. --heavy-rank R does --heavy-factor x the compute of the
other ranks each step (the CPU straggler); the ranks agree each step whether to stop.
The run lasts until both --min-steps steps and --min-seconds s are done, whatever the speed of
the machine, and with --until-finding ID until the agent's live findings (pushed back to the
process) hold ID too, or --max-seconds have passed. Prints "host_train: live finding ID" when
it saw it, then "host_train: rank R, N steps".
"""
import argparse
import os
import socket
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.utils.data import DataLoader, Dataset

import gpumon


class Leaky(Dataset):
    def __init__(self, leak_bytes):
        self.leak_bytes = leak_bytes
        self.kept = []

    def __len__(self):
        return 1 << 30

    def __getitem__(self, i):
        if self.leak_bytes:
            self.kept.append(b"\x01" * self.leak_bytes)  # written: resident, not a lazy zero page
        return torch.full((64,), float(i % 7))


def train(args, rank, world):
    torch.set_num_threads(1)
    if world > 1:
        dist.init_process_group("gloo")
    mon = gpumon.start()
    loader = DataLoader(Leaky(int(args.leak_mb * 1e6)), batch_size=1, num_workers=args.workers)
    weights = torch.randn(args.size, args.size)
    work = args.heavy_factor if rank == args.heavy_rank else 1
    model = torch.nn.Linear(64, 1)
    if world > 1:
        model = torch.nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    t0 = time.monotonic()
    steps = 0
    seen = not args.until_finding
    for x in mon.wrap(loader):
        for _ in range(work * args.matmuls):
            weights = torch.tanh(weights @ weights)
        loss = model(x).sum() + weights.sum() * 0
        opt.zero_grad()
        loss.backward()
        opt.step()
        if args.leak_mb or not world > 1:
            time.sleep(0.1)  # paces the leak; a DDP run is paced by its compute
        mon.step()
        steps += 1
        if not seen and any(f["id"] == args.until_finding for f in mon.findings()):
            seen = True
            print("host_train: live finding %s" % args.until_finding, flush=True)
        elapsed = time.monotonic() - t0
        done = torch.tensor([int((steps >= args.min_steps and elapsed >= args.min_seconds and seen)
                                 or elapsed >= args.max_seconds)])
        if world > 1:
            dist.all_reduce(done, op=dist.ReduceOp.MIN)
        if done.item():
            break
    mon.close()
    if world > 1:
        dist.destroy_process_group()
    print("host_train: rank %d, %d steps" % (rank, steps), flush=True)


def spawned(index, world, port, args):
    os.environ.update(RANK=str(index), LOCAL_RANK=str(index), WORLD_SIZE=str(world),
                      LOCAL_WORLD_SIZE=str(world), MASTER_ADDR="127.0.0.1",
                      MASTER_PORT=str(port))
    train(args, index, world)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--leak-mb", type=float, default=0)
    p.add_argument("--workers", type=int, default=0)
    p.add_argument("--min-steps", type=int, default=60)
    p.add_argument("--min-seconds", type=float, default=14)
    p.add_argument("--until-finding", default="", help="run until the live findings hold it")
    p.add_argument("--max-seconds", type=float, default=90, help="give up waiting for it then")
    p.add_argument("--nprocs", type=int, default=1)
    p.add_argument("--heavy-rank", type=int, default=-1)
    p.add_argument("--heavy-factor", type=int, default=1)
    p.add_argument("--size", type=int, default=160, help="matrix side of the compute")
    p.add_argument("--matmuls", type=int, default=4, help="matmuls per step of a normal rank")
    args = p.parse_args()
    if args.nprocs > 1:
        mp.spawn(spawned, args=(args.nprocs, free_port(), args), nprocs=args.nprocs)
    else:
        train(args, 0, 1)


if __name__ == "__main__":
    main()
