# SPDX-License-Identifier: MIT
"""A training loop whose steps run through gpumon's OOM guard (docs/oom-guard.md): on a CUDA
out-of-memory error the same batch is split into micro-batches and retried, and training goes on.

    gpumon record -o run.gpumon -- python3 examples/oom_guard.py --steps 200
    gpumon record -o run.gpumon -- python3 examples/oom_guard.py --batch-size 4096 --width 16384

On the CPU, or with --plant-oom-above N, the model raises torch.cuda.OutOfMemoryError when a
forward gets more than N samples (default on the CPU: a quarter of the batch), so the guard has
something to do; on CUDA without it, only real OOMs count.
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
p.add_argument("--width", type=int, default=512, help="hidden units")
p.add_argument("--min-micro-batch-size", type=int, default=1)
p.add_argument("--plant-oom-above", type=int, default=None,
               help="raise a CUDA OOM when a forward gets more samples (default on the CPU: "
                    "batch-size / 4; on CUDA: never)")
args = p.parse_args()
if args.device == "cuda" and not torch.cuda.is_available():
    p.error("--device cuda: this torch sees no CUDA GPU")
plant = args.plant_oom_above
if plant is None and args.device == "cpu":
    plant = max(args.batch_size // 4, 1)

torch.manual_seed(0)
n = args.steps * args.batch_size
data = TensorDataset(torch.randn(n, 256), torch.randint(0, 10, (n,)))
loader = DataLoader(data, batch_size=args.batch_size, shuffle=True)
model = torch.nn.Sequential(torch.nn.Linear(256, args.width), torch.nn.ReLU(),
                            torch.nn.Linear(args.width, 10)).to(args.device)
opt = torch.optim.SGD(model.parameters(), lr=0.05)


def forward(micro_batch):
    """The micro-batch's mean loss: what the guard calls, once per micro-batch."""
    x, y = micro_batch
    if plant is not None and x.shape[0] > plant:
        raise torch.cuda.OutOfMemoryError("CUDA out of memory (planted: %d samples > %d)"
                                          % (x.shape[0], plant))
    return F.cross_entropy(model(x), y)


mon = gpumon.start()
guard = mon.oom_guard(model, min_micro_batch_size=args.min_micro_batch_size)
for x, y in mon.wrap(loader):
    batch = (x.to(args.device, non_blocking=True), y.to(args.device, non_blocking=True))
    opt.zero_grad(set_to_none=True)         # before run(): a retry starts from no gradients
    loss = guard.run(batch, forward)        # forward + backward, split when memory runs out
    opt.step()
    mon.step()
for action in guard.actions:
    print("oom_guard: step %d: %s" % (action["step"], action["summary"]))
sent = mon.stats().get("sent")
mon.close()
print("oom_guard: %d steps on %s, micro-batch %s of %d, loss %.3f, gpumon %s"
      % (args.steps, args.device, guard.micro_batch_size or args.batch_size, args.batch_size,
         loss.item(), "inactive" if sent is None else "sent %d messages" % sent))
