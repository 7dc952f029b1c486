# SPDX-License-Identifier: MIT
"""A plain PyTorch training loop with gpumon's three lines (docs/python.md).

    gpumon record -o run.gpumon -- python3 examples/train_plain.py --steps 200
    gpumon report run.gpumon -o run.html
"""
import argparse

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

import gpumon

p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
p.add_argument("--steps", type=int, default=100, help="training steps (default 100)")
p.add_argument("--device", choices=("cpu", "cuda"),
               default="cuda" if torch.cuda.is_available() else "cpu")
p.add_argument("--batch-size", type=int, default=64)
p.add_argument("--workers", type=int, default=2, help="DataLoader worker processes")
args = p.parse_args()
if args.device == "cuda" and not torch.cuda.is_available():
    p.error("--device cuda: this torch sees no CUDA GPU")

torch.manual_seed(0)
n = args.steps * args.batch_size
data = TensorDataset(torch.randn(n, 256), torch.randint(0, 10, (n,)))
loader = DataLoader(data, batch_size=args.batch_size, shuffle=True, num_workers=args.workers,
                    pin_memory=args.device == "cuda")
model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(),
                            torch.nn.Linear(512, 10)).to(args.device)
opt = torch.optim.SGD(model.parameters(), lr=0.05)

mon = gpumon.start()                      # 1. attach to the agent (or start one)
for x, y in mon.wrap(loader):             # 2. time the wait for each batch
    x = x.to(args.device, non_blocking=True)
    y = y.to(args.device, non_blocking=True)
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    mon.step()                            # 3. end of a step
sent = mon.stats().get("sent")
mon.close()
print("train_plain: %d steps on %s, loss %.3f, gpumon %s"
      % (args.steps, args.device, loss.item(),
         "inactive" if sent is None else "sent %d messages" % sent))
