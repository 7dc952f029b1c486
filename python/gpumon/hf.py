# SPDX-License-Identifier: MIT
"""gpumon for the Hugging Face Trainer: `Trainer(..., callbacks=[GpumonCallback()])`.

Every process sends its own steps (rank, local rank and world size from the environment, else
from TrainingArguments). A step is one optimizer update, on_step_begin to on_step_end (all its
gradient-accumulation micro-batches); its data wait is the time since the previous update ended
(or the epoch began), where the Trainer fetches the update's batches, less the logging,
evaluation and saving it reports with on_log / on_evaluate / on_save.
"""

try:
    from transformers import TrainerCallback as _TrainerCallback
except ImportError as e:
    raise ImportError(
        "gpumon.hf needs Hugging Face transformers: pip install transformers") from e

from gpumon._callback_core import TrainerHooks


class GpumonCallback(_TrainerCallback):
    """Trainer callback sending each optimizer step as a gpumon step.

    monitor: a gpumon.Monitor to use (you close it); by default one is started with
      gpumon.start(**start_kwargs) when training begins and closed when it ends.
    adapt_loader: True (or a dict of options) to retune the Trainer's train DataLoader's
      num_workers / prefetch_factor between epochs (docs/adaptive-loader.md); its state is
      `callback.adaptive_loader`.
    """

    def __init__(self, monitor=None, adapt_loader=False, **start_kwargs):
        self._hooks = TrainerHooks(monitor, adapt_loader, **start_kwargs)

    @property
    def monitor(self):
        return self._hooks.monitor

    @property
    def adaptive_loader(self):
        """The AdaptiveLoader tuning the train DataLoader (None before an epoch ended)."""
        return self._hooks.adaptive

    def on_train_begin(self, args, state, control, **kwargs):
        self._hooks.train_started(
            rank=getattr(args, "process_index", None),
            local_rank=getattr(args, "local_process_index", None),
            world_size=getattr(args, "world_size", None))

    def on_epoch_begin(self, args, state, control, **kwargs):
        self._hooks.epoch_started()

    def on_epoch_end(self, args, state, control, **kwargs):
        self._hooks.epoch_ended(kwargs.get("train_dataloader"))

    def on_step_begin(self, args, state, control, **kwargs):
        self._hooks.step_began()

    def on_step_end(self, args, state, control, **kwargs):
        self._hooks.step_ended()

    def on_log(self, args, state, control, **kwargs):
        self._hooks.outside_work_done()

    def on_evaluate(self, args, state, control, **kwargs):
        self._hooks.outside_work_done()

    def on_save(self, args, state, control, **kwargs):
        self._hooks.outside_work_done()

    def on_train_end(self, args, state, control, **kwargs):
        self._hooks.train_ended()
