# SPDX-License-Identifier: MIT
"""gpumon for the Hugging Face Trainer: `Trainer(..., callbacks=[GpumonCallback()])`; and
OomGuardMixin, which runs its training steps through the OOM guard (docs/oom-guard.md).

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


class OomGuardMixin:
    """Runs each training step through gpumon's OOM guard (docs/oom-guard.md): put it before
    the Trainer, `class GuardedTrainer(OomGuardMixin, Trainer): pass`, and train as usual.

    Its training_step follows transformers' (Trainer.training_step): inputs prepared, loss from
    compute_loss under compute_loss_context_manager(), averaged over the GPUs of DataParallel,
    divided by gradient_accumulation_steps, backward through accelerator.backward, the detached
    loss returned; but the guard runs it as micro-batches of the step's inputs (a dict of
    tensors split along dim 0) when memory runs out. Use gradient_accumulation_steps=1 with the
    effective batch as per_device_train_batch_size: a retry drops the gradients accumulated
    before the step (a warning says so when gradient_accumulation_steps > 1). compute_loss is
    called without num_items_in_batch, so each micro-batch's loss is the model's own mean: over
    its samples, or for token-level losses (causal LM, seq2seq, token classification: labels
    -100 ignored) over its labelled tokens. Each micro-batch's loss is weighted by its share of
    the step: by default, when `labels` is in the inputs, its count of labels != -100 (the
    full batch's token mean then; a causal LM's shift drops the first label of each row from
    its loss, so there the weights are off by one token per row), else its sample count. Pass
    gpumon_oom_guard_options={"weight": fn} (fn(micro_batch) -> number) for anything else.

    gpumon_monitor: the Monitor the actions go to (default: the monitor of a GpumonCallback
      among the trainer's callbacks, else none: the guard acts, nothing is sent);
    gpumon_oom_guard_options: keyword arguments of Monitor.oom_guard (min_micro_batch_size, ...).
    The guard is made at the first step for the model the Trainer passes (the DDP-wrapped one
    under distributed training) and is `self.gpumon_oom_guard`.
    """

    gpumon_monitor = None
    gpumon_oom_guard_options = {}
    gpumon_oom_guard = None

    def training_step(self, model, inputs, num_items_in_batch=None):
        accumulation = max(int(getattr(self.args, "gradient_accumulation_steps", 1) or 1), 1)
        guard = self.gpumon_oom_guard
        if guard is None:
            if accumulation > 1:
                from gpumon._monitor import _warn_once
                _warn_once("oom-guard-accumulation",
                           "OomGuardMixin with gradient_accumulation_steps=%d: a retry after an "
                           "OOM drops the gradients of the update's earlier accumulation steps; "
                           "use gradient_accumulation_steps=1 and a larger "
                           "per_device_train_batch_size, the guard accumulates" % accumulation)
            options = dict(self.gpumon_oom_guard_options)
            options.setdefault("weight", _labelled_tokens)
            guard = self.gpumon_oom_guard = self._gpumon_monitor().oom_guard(
                model, backward=lambda loss: self.accelerator.backward(loss / accumulation),
                **options)
        model.train()
        train = getattr(getattr(self, "optimizer", None), "train", None)
        if callable(train):  # schedule-free optimizers
            train()
        inputs = self._prepare_inputs(inputs)

        def forward(micro_batch):
            with self.compute_loss_context_manager():
                loss = self.compute_loss(model, micro_batch)
            if getattr(self.args, "n_gpu", 1) > 1:
                loss = loss.mean()
            return loss

        return guard.run(inputs, forward) / accumulation

    def _gpumon_monitor(self):
        if self.gpumon_monitor is not None:
            return self.gpumon_monitor
        handler = getattr(self, "callback_handler", None)
        for callback in getattr(handler, "callbacks", ()):
            monitor = getattr(callback, "monitor", None)
            if isinstance(callback, GpumonCallback) and monitor is not None:
                return monitor
        from gpumon._monitor import Monitor
        return Monitor()


def _labelled_tokens(micro_batch):
    """The weight of a micro-batch under a model's own loss: its labels that are not -100
    (the ignore index of transformers' losses) when it has `labels`, else None (the guard
    then weights by the sample count)."""
    labels = micro_batch.get("labels") if hasattr(micro_batch, "get") else None
    if labels is None or not hasattr(labels, "ne"):
        return None
    return int(labels.ne(-100).sum())
