# SPDX-License-Identifier: MIT
"""gpumon for PyTorch Lightning 2.x: `Trainer(callbacks=[GpumonCallback()])`, nothing in the loop.

Every rank sends its own steps (rank, local rank and world size from the environment, else from
the Trainer). A step is one training batch, from on_train_batch_start to on_train_batch_end;
its data wait is the time since the previous batch ended (or the epoch started), which is
where Lightning fetches the next batch (docs/python.md says what else can fall in that gap).
"""

try:
    from lightning.pytorch import Callback as _Callback
except ImportError:
    try:
        from pytorch_lightning import Callback as _Callback
    except ImportError as e:
        raise ImportError(
            "gpumon.lightning needs PyTorch Lightning 2.x: pip install lightning "
            "(or pytorch-lightning)") from e

from gpumon._callback_core import TrainerHooks


class GpumonCallback(_Callback):
    """Lightning callback sending each training batch as a gpumon step.

    monitor: a gpumon.Monitor to use (you close it); by default one is started with
      gpumon.start(**start_kwargs) when training starts and closed when it ends.
    adapt_loader: True (or a dict of options) to retune trainer.train_dataloader's
      num_workers / prefetch_factor between epochs (docs/adaptive-loader.md); its state is
      `callback.adaptive_loader`.
    """

    def __init__(self, monitor=None, adapt_loader=False, **start_kwargs):
        super().__init__()
        self._hooks = TrainerHooks(monitor, adapt_loader, **start_kwargs)

    @property
    def monitor(self):
        return self._hooks.monitor

    @property
    def adaptive_loader(self):
        """The AdaptiveLoader tuning the train DataLoader (None before an epoch ended)."""
        return self._hooks.adaptive

    def on_train_start(self, trainer, pl_module):
        self._hooks.train_started(
            rank=getattr(trainer, "global_rank", None),
            local_rank=getattr(trainer, "local_rank", None),
            world_size=getattr(trainer, "world_size", None))

    def on_train_epoch_start(self, trainer, pl_module):
        self._hooks.epoch_started()

    def on_train_epoch_end(self, trainer, pl_module):
        self._hooks.epoch_ended(getattr(trainer, "train_dataloader", None))

    def on_train_batch_start(self, trainer, pl_module, batch, batch_idx):
        self._hooks.step_began()

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        self._hooks.step_ended()

    def on_validation_end(self, trainer, pl_module):
        self._hooks.outside_work_done()

    def on_save_checkpoint(self, trainer, pl_module, checkpoint):
        self._hooks.outside_work_done()

    def on_train_end(self, trainer, pl_module):
        self._hooks.train_ended()

    def on_exception(self, trainer, pl_module, exception):
        self._hooks.train_ended()
