# SPDX-License-Identifier: MIT
"""Minimal stand-ins for lightning.pytorch and transformers: the callback base classes and a
loop calling the hooks in the order the real trainers do, with sleeps where they work.

Lightning 2.6 (fit loop, _TrainingEpochLoop.advance): on_fit_start, the sanity check
(on_validation_start/end), on_train_start; per epoch on_train_epoch_start, then per batch:
next(data_fetcher) (the loader), on_train_batch_start, training_step / backward / optimizer
hooks, on_train_batch_end, then validation when due (on_validation_start ... on_validation_end)
and checkpoints (on_save_checkpoint); on_train_epoch_end; on_train_end; on_fit_end.

transformers 5.x (Trainer._inner_training_loop): on_train_begin; per epoch on_epoch_begin, then
per optimizer update: get_batch_samples (fetches every gradient-accumulation micro-batch),
on_step_begin, per micro-batch training_step and on_substep_end except after the last,
on_pre_optimizer_step, on_optimizer_step, on_step_end, then _maybe_log_save_evaluate (on_log,
on_evaluate, on_save when due); on_epoch_end; on_train_end.

Both loops return, per step, what they measured around the hooks: "body", from before the
step's first hook to after its last, and "gap", from before the last hook that can start a
data wait (a step's end, an epoch's start, the end of work outside steps) to after the next
step's first hook. A callback's step time and data wait lie within them however slowly the
machine runs the loop, so tests bound by these rather than by a guessed margin.
"""
import sys
import time
import types
from types import SimpleNamespace


class _Hooks:
    def __getattr__(self, name):
        if name.startswith("on_") or name in ("setup", "teardown"):
            return lambda *a, **k: None
        raise AttributeError(name)


def install_lightning(monkeypatch):
    """Puts a fake `lightning` and `lightning.pytorch` (with Callback) into sys.modules."""
    top = types.ModuleType("lightning")
    pl = types.ModuleType("lightning.pytorch")

    class Callback(_Hooks):
        pass

    pl.Callback = Callback
    top.pytorch = pl
    monkeypatch.setitem(sys.modules, "lightning", top)
    monkeypatch.setitem(sys.modules, "lightning.pytorch", pl)
    monkeypatch.delitem(sys.modules, "gpumon.lightning", raising=False)


def install_transformers(monkeypatch):
    """Puts a fake `transformers` (with TrainerCallback) into sys.modules."""
    tf = types.ModuleType("transformers")

    class TrainerCallback(_Hooks):
        pass

    tf.TrainerCallback = TrainerCallback
    monkeypatch.setitem(sys.modules, "transformers", tf)
    monkeypatch.delitem(sys.modules, "gpumon.hf", raising=False)


def _fetcher(loader, fetch_s):
    """One epoch's batches: from `loader` (iterated anew each epoch, as the trainers do), else
    a sleep of fetch_s each."""
    if loader is not None:
        return iter(loader)
    return (time.sleep(fetch_s) for _ in iter(int, 1))


def lightning_fit(callbacks, batches, fetch_s, step_s, val_every=0, val_s=0.0, epochs=1,
                  global_rank=0, local_rank=0, world_size=1, loader=None):
    """loader: a DataLoader to fetch from (trainer.train_dataloader), every batch of it an
    epoch; else `batches` sleeps of fetch_s."""
    trainer = SimpleNamespace(global_rank=global_rank, local_rank=local_rank,
                              world_size=world_size, train_dataloader=loader)
    module = object()

    def call(name, *args):
        for cb in callbacks:
            getattr(cb, name)(trainer, module, *args)

    call("setup", "fit")
    call("on_fit_start")
    call("on_validation_start")  # sanity check
    call("on_validation_end")
    call("on_train_start")
    spans = []
    for _ in range(epochs):
        gap_from = time.monotonic()
        call("on_train_epoch_start")
        fetcher = _fetcher(loader, fetch_s)
        for i in range(len(loader) if loader is not None else batches):
            batch = next(fetcher)  # next(data_fetcher)
            batch = batch if loader is not None else [i]
            body_from = time.monotonic()
            call("on_train_batch_start", batch, i)
            gap = time.monotonic() - gap_from
            call("on_before_backward", None)
            time.sleep(step_s)
            call("on_after_backward")
            gap_from = time.monotonic()
            call("on_train_batch_end", {"loss": 0.0}, batch, i)
            spans.append({"body": time.monotonic() - body_from, "gap": gap})
            if val_every and (i + 1) % val_every == 0:
                call("on_validation_start")
                time.sleep(val_s)
                call("on_validation_end")
                gap_from = time.monotonic()
                call("on_save_checkpoint", {})
        call("on_train_epoch_end")
    call("on_train_end")
    call("on_fit_end")
    call("teardown", "fit")
    return spans


def hf_train(callbacks, updates, fetch_s, step_s, grad_accum=1, log_every=0, log_s=0.0,
             epochs=1, process_index=0, local_process_index=0, world_size=1, loader=None):
    """loader: a DataLoader to fetch from (the callbacks' train_dataloader), len(loader) //
    grad_accum updates an epoch; else `updates` of grad_accum sleeps of fetch_s."""
    args = SimpleNamespace(process_index=process_index,
                           local_process_index=local_process_index, world_size=world_size,
                           gradient_accumulation_steps=grad_accum)
    state = SimpleNamespace(global_step=0, epoch=0.0)
    control = SimpleNamespace()

    def call(name, **extra):
        for cb in callbacks:
            getattr(cb, name)(args, state, control, model=None, optimizer=None,
                              train_dataloader=loader, **extra)

    call("on_init_end")
    call("on_train_begin")
    spans = []
    for epoch in range(epochs):
        gap_from = time.monotonic()
        call("on_epoch_begin")
        fetcher = _fetcher(loader, fetch_s)
        for _ in range(len(loader) // grad_accum if loader is not None else updates):
            for _ in range(grad_accum):  # get_batch_samples: every micro-batch at once
                next(fetcher)
            body_from = time.monotonic()
            call("on_step_begin")
            gap = time.monotonic() - gap_from
            for micro in range(grad_accum):
                time.sleep(step_s / grad_accum)
                if micro + 1 < grad_accum:
                    call("on_substep_end")
            call("on_pre_optimizer_step")
            call("on_optimizer_step")
            state.global_step += 1
            gap_from = time.monotonic()
            call("on_step_end")
            spans.append({"body": time.monotonic() - body_from, "gap": gap})
            if log_every and state.global_step % log_every == 0:
                time.sleep(log_s)
                gap_from = time.monotonic()
                call("on_log", logs={"loss": 0.0})
        call("on_epoch_end")
    call("on_train_end")
    return spans
