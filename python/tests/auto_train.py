# SPDX-License-Identifier: MIT
"""A training script that never mentions gpumon (unless --explicit), run by test_auto.py under
`gpumon record` to check the zero-code hooks (gpumon/_auto.py) against the explicit API.

usage: auto_train.py STEPS [--item-sleep S] [--accum K] [--two-optimizers] [--val-every N]
                           [--own-patches] [--explicit] [--explicit-late] [--ddp]
                           [--style plain|lightning|hf] [--print-weights]
Prints "done STEPS" (optimizer steps made) and, with --print-weights, every loss and the final
weights exactly (float.hex), for the bit-identical check.
"""
import argparse
import os
import sys
import time

import torch
from torch.utils.data import DataLoader, Dataset

p = argparse.ArgumentParser()
p.add_argument("steps", type=int, help="optimizer steps")
p.add_argument("--item-sleep", type=float, default=0.0, help="seconds per sample fetched")
p.add_argument("--accum", type=int, default=1, help="backward passes per optimizer step")
p.add_argument("--two-optimizers", action="store_true", help="a GAN-like pair, both step")
p.add_argument("--val-every", type=int, default=0, help="a no_grad validation pass every N")
p.add_argument("--own-patches", action="store_true",
               help="the script wraps SGD.step and the DataLoader iterator's __next__ itself")
p.add_argument("--explicit", action="store_true", help="gpumon's three lines (the twin)")
p.add_argument("--explicit-late", action="store_true",
               help="gpumon.start() only after the first optimizer step")
p.add_argument("--ddp", action="store_true", help="DistributedDataParallel over gloo")
p.add_argument("--style", choices=("plain", "lightning", "hf"), default="plain",
               help="lightning: a batch fetched one ahead, optimizer.step(closure); hf: an LR "
                    "scheduler stepping after the optimizer")
p.add_argument("--print-weights", action="store_true")
p.add_argument("--raise-at", type=int, default=0, help="raise RuntimeError after that many steps")
a = p.parse_args()


class Slow(Dataset):
    def __len__(self):
        return a.steps * a.accum * 2

    def __getitem__(self, i):
        time.sleep(a.item_sleep)
        return torch.full((4,), float(i % 7)), torch.tensor([float(i % 3)])


if a.ddp:
    torch.distributed.init_process_group("gloo")
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
if a.ddp:
    model = torch.nn.parallel.DistributedDataParallel(model)
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
opt2 = torch.optim.Adam(model.parameters(), lr=1e-4) if a.two_optimizers else None
# transformers' Trainer steps a scheduler after the optimizer; torch's LR schedulers wrap the
# optimizer's step method (with_counter), which the hooks must leave working.
scheduler = (torch.optim.lr_scheduler.LambdaLR(opt, lambda n: 1.0 / (1 + n))
             if a.style == "hf" else None)


def one_ahead(batches):
    """Lightning's fetcher: the next batch is fetched before the current one is trained on."""
    it = iter(batches)
    try:
        current = next(it)
    except StopIteration:
        return
    for following in it:
        yield current
        current = following
    yield current
loader = DataLoader(Slow(), batch_size=2, shuffle=True, num_workers=0)
own = {"steps": 0, "batches": 0}
if a.own_patches:  # as a profiler or another tool might: they must keep working
    from torch.utils.data.dataloader import _BaseDataLoaderIter
    sgd_step, next_ = torch.optim.SGD.step, _BaseDataLoaderIter.__next__

    def counted_step(self, *args, **kwargs):
        own["steps"] += 1
        return sgd_step(self, *args, **kwargs)

    def counted_next(self):
        own["batches"] += 1
        return next_(self)

    torch.optim.SGD.step = counted_step
    _BaseDataLoaderIter.__next__ = counted_next

mon = None
if a.explicit:
    import gpumon
    mon = gpumon.start()
    batches = mon.wrap(loader)
else:
    batches = loader
losses = []
done = 0
backward = 0
while done < a.steps:
    for x, y in (one_ahead(batches) if a.style == "lightning" else batches):
        def closure():
            loss = torch.nn.functional.mse_loss(model(x), y)
            losses.append(loss.item())
            (loss / a.accum).backward()
            return loss

        backward += 1
        if a.style == "lightning" and backward % a.accum == 0:
            opt.step(closure)  # forward and backward inside the optimizer's step
        else:
            closure()
        if backward % a.accum:
            continue
        if a.style != "lightning":
            opt.step()
        if scheduler is not None:
            scheduler.step()
        if opt2 is not None:
            opt2.step()
        opt.zero_grad()
        done += 1
        if mon is not None:
            mon.step()
        if a.explicit_late and done == 1:
            import gpumon
            mon = gpumon.start()  # the hooks' Monitor, handed over: counted once
        if a.val_every and done % a.val_every == 0:
            with torch.no_grad():
                for vx, _ in DataLoader(Slow(), batch_size=4):
                    model(vx)
                    break
        if done == a.raise_at:
            raise RuntimeError("planted failure after step %d" % done)
        if done == a.steps:
            break
if mon is not None:
    mon.close()
if a.own_patches:
    assert own["steps"] == a.steps, own
    print("own patches", own["steps"], own["batches"])
if a.print_weights:
    print("losses", " ".join(float(v).hex() for v in losses))
    for name, t in model.state_dict().items():
        print(name, " ".join(float(v).hex() for v in t.flatten().tolist()))
sys.stdout.flush()
# One write: the ranks of a launcher share the pipe, and a print's pieces could interleave.
os.write(1, ("done %d rank %s\n" % (done, os.environ.get("RANK", "-"))).encode())
