# SPDX-License-Identifier: MIT
"""A DataLoader that tunes its own workers: mon.wrap(loader, adapt=True) (docs/adaptive-loader.md).

Each item takes --item-ms to "decode" (a sleep standing for reading and augmenting a file), the
loop starts with num_workers=0, and after each epoch that waited for data gpumon sets the
loader's num_workers / prefetch_factor for the next one, within its CPU and RAM budgets:

    gpumon record -o run.gpumon -- python3 examples/adaptive_loader.py --epochs 3
    gpumon export run.gpumon --steps --format csv

It works without an agent too (then it adapts all the same and only sends nothing).
"""
import argparse
import time

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

import gpumon

p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
p.add_argument("--epochs", type=int, default=3)
p.add_argument("--batches", type=int, default=40, help="batches an epoch (default 40)")
p.add_argument("--batch-size", type=int, default=8)
p.add_argument("--item-ms", type=float, default=4.0, help="time to load one item (default 4)")
p.add_argument("--device", choices=("cpu", "cuda"),
               default="cuda" if torch.cuda.is_available() else "cpu")
args = p.parse_args()
if args.device == "cuda" and not torch.cuda.is_available():
    p.error("--device cuda: this torch sees no CUDA GPU")


class SlowImages(Dataset):
    """Item i is a fixed 256-value "image" and its label, after --item-ms of loading."""

    def __len__(self):
        return args.batches * args.batch_size

    def __getitem__(self, i):
        time.sleep(args.item_ms / 1000.0)
        g = torch.Generator().manual_seed(i)
        return torch.randn(256, generator=g), i % 10


torch.manual_seed(0)
loader = DataLoader(SlowImages(), batch_size=args.batch_size, shuffle=True, num_workers=0,
                    generator=torch.Generator().manual_seed(0),
                    pin_memory=args.device == "cuda")
model = torch.nn.Sequential(torch.nn.Linear(256, 2048), torch.nn.ReLU(),
                            torch.nn.Linear(2048, 10)).to(args.device)
opt = torch.optim.SGD(model.parameters(), lr=0.05)

mon = gpumon.start()
batches = mon.wrap(loader, adapt=True)    # measures each epoch, retunes between epochs
for epoch in range(args.epochs):
    for x, y in batches:
        x = x.to(args.device, non_blocking=True)
        y = y.to(args.device, non_blocking=True)
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if args.device == "cpu":
            time.sleep(0.02)              # stands for a GPU step the CPU would wait for
        mon.step()
    e = batches.epochs[-1]
    print("adaptive_loader: epoch %d: num_workers %d, data wait %.0f %% (%.0f %% after the "
          "start-up), %.1f steps/s" % (epoch + 1, e["num_workers"], 100 * e["data_wait_share"],
                                       100 * e["steady_wait_share"], e["steps_per_s"]))
for action in batches.actions:
    print("adaptive_loader: %s (%s): %s" % (action["action"], action["reason"],
                                           action["summary"]))
mon.close()
print("adaptive_loader: now num_workers=%d, prefetch_factor=%s"
      % (batches.num_workers, batches.prefetch_factor))
