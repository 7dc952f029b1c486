# SPDX-License-Identifier: MIT
"""DistributedDataParallel with gpumon: every rank calls gpumon.start() and sends its own steps
to the node's one agent. gloo on the CPU, nccl on CUDA.

    torchrun --nproc-per-node 2 examples/train_ddp.py --steps 100        # torchrun sets RANK...
    python3 examples/train_ddp.py --nprocs 2 --device cpu                 # or spawns them itself
    gpumon record -o ddp.gpumon -- torchrun --nproc-per-node 2 examples/train_ddp.py
"""
import argparse
import os
import socket

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

import gpumon


def train(args):
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local_rank = int(os.environ.get("LOCAL_RANK", rank))
    if args.device == "cuda":
        torch.cuda.set_device(local_rank)  # before gpumon.start(): it reads the device
    dist.init_process_group("nccl" if args.device == "cuda" else "gloo")
    device = torch.device(args.device, local_rank) if args.device == "cuda" else "cpu"

    mon = gpumon.start()
    torch.manual_seed(0)
    n = args.steps * args.batch_size * world
    data = TensorDataset(torch.randn(n, 256), torch.randint(0, 10, (n,)))
    loader = DataLoader(data, batch_size=args.batch_size, sampler=DistributedSampler(data))
    net = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10))
    model = DistributedDataParallel(net.to(device),
                                    device_ids=[local_rank] if args.device == "cuda" else None)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    for x, y in mon.wrap(loader):
        loss = F.cross_entropy(model(x.to(device)), y.to(device))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        mon.step()
    mon.close()
    dist.destroy_process_group()
    print("train_ddp: rank %d/%d, %d steps on %s, loss %.3f"
          % (rank, world, args.steps, device, loss.item()), flush=True)


def spawned(index, world, port, args):
    os.environ.update(RANK=str(index), LOCAL_RANK=str(index), WORLD_SIZE=str(world),
                      LOCAL_WORLD_SIZE=str(world), MASTER_ADDR="127.0.0.1",
                      MASTER_PORT=str(port))
    train(args)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--steps", type=int, default=100, help="training steps per rank")
    p.add_argument("--device", choices=("cpu", "cuda"),
                   default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--nprocs", type=int, default=0,
                   help="ranks to spawn when not under torchrun (default: GPUs, or 2 on cpu)")
    p.add_argument("--batch-size", type=int, default=32)
    args = p.parse_args()
    if args.device == "cuda" and not torch.cuda.is_available():
        p.error("--device cuda: this torch sees no CUDA GPU")
    if "RANK" in os.environ:  # torchrun (or another launcher) started this rank
        train(args)
        return
    nprocs = args.nprocs or (torch.cuda.device_count() if args.device == "cuda" else 2)
    mp.spawn(spawned, args=(nprocs, free_port(), args), nprocs=nprocs)


if __name__ == "__main__":
    main()
