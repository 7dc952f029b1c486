# SPDX-License-Identifier: MIT
"""PyTorch Lightning with gpumon: one callback, nothing in the training step.

    gpumon record -o pl.gpumon -- python3 examples/train_lightning.py --steps 200
Prints a skip line and exits 0 where Lightning is not installed.
"""
import argparse
import sys

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

try:
    import lightning.pytorch as pl
except ImportError:
    try:
        import pytorch_lightning as pl
    except ImportError:
        print("train_lightning: skipped, PyTorch Lightning is not installed "
              "(pip install lightning)")
        sys.exit(0)

from gpumon.lightning import GpumonCallback


class Classifier(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(),
                                       torch.nn.Linear(512, 10))

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.cross_entropy(self.net(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--device", choices=("cpu", "cuda"),
                   default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--batch-size", type=int, default=64)
    args = p.parse_args()
    torch.manual_seed(0)
    n = args.steps * args.batch_size
    data = TensorDataset(torch.randn(n, 256), torch.randint(0, 10, (n,)))
    callback = GpumonCallback()  # starts gpumon when training starts, closes it at the end
    trainer = pl.Trainer(max_steps=args.steps, accelerator="gpu" if args.device == "cuda" else "cpu",
                         devices=1, callbacks=[callback], logger=False,
                         enable_checkpointing=False, enable_progress_bar=False,
                         enable_model_summary=False)
    trainer.fit(Classifier(), DataLoader(data, batch_size=args.batch_size, shuffle=True))
    print("train_lightning: %d steps on %s, gpumon %s"
          % (trainer.global_step, args.device, "active" if callback.monitor else "inactive"))


if __name__ == "__main__":
    main()
