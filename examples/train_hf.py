# SPDX-License-Identifier: MIT
"""The Hugging Face Trainer with gpumon: one callback, nothing in the loop.

    gpumon record -o hf.gpumon -- python3 examples/train_hf.py --steps 200
Prints a skip line and exits 0 where transformers is not installed.
"""
import argparse
import sys
import tempfile

import torch
import torch.nn.functional as F

try:
    from transformers import Trainer, TrainingArguments
except ImportError:
    print("train_hf: skipped, transformers is not installed (pip install transformers)")
    sys.exit(0)

from gpumon.hf import GpumonCallback


class Classifier(torch.nn.Module):
    """Any nn.Module whose forward takes the batch's keys and returns a loss will do."""

    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(),
                                       torch.nn.Linear(512, 10))

    def forward(self, x, labels):
        return {"loss": F.cross_entropy(self.net(x), labels)}


class Random(torch.utils.data.Dataset):
    def __init__(self, n):
        g = torch.Generator().manual_seed(0)
        self.x = torch.randn(n, 256, generator=g)
        self.y = torch.randint(0, 10, (n,), generator=g)

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return {"x": self.x[i], "labels": self.y[i]}


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--device", choices=("cpu", "cuda"),
                   default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--batch-size", type=int, default=64)
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as out:
        targs = TrainingArguments(output_dir=out, max_steps=args.steps,
                                  per_device_train_batch_size=args.batch_size,
                                  use_cpu=args.device == "cpu", report_to="none",
                                  save_strategy="no", logging_strategy="no", disable_tqdm=True)
        callback = GpumonCallback()  # starts gpumon when training begins, closes it at the end
        trainer = Trainer(model=Classifier(), args=targs,
                          train_dataset=Random(args.steps * args.batch_size),
                          callbacks=[callback])
        trainer.train()
    print("train_hf: %d steps on %s, gpumon %s"
          % (trainer.state.global_step, args.device,
             "active" if callback.monitor else "inactive"))


if __name__ == "__main__":
    main()
