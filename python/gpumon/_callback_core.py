# SPDX-License-Identifier: MIT
"""What the Lightning and Hugging Face callbacks share: a Monitor driven by a trainer's hooks.

A trainer gives no hook around its `next(loader)`; it gives one when a step begins and one when
it ends. TrainerHooks therefore counts the time between the end of one step (or the start of
the epoch) and the beginning of the next as that step's data wait. The fetch dominates that
gap; work the trainer does there and reports with a hook of its own (validation, logging,
checkpoints) is left out by `outside_work_done()`. The step itself is timed like
`with mon.step():` (its body only).

With adapt_loader, the same gaps measure each epoch's data wait for the adaptive loader
(_adaptive_loader.py), which sets the trainer's train DataLoader's num_workers /
prefetch_factor when the epoch ends (the trainer builds the next epoch's iterator from them);
it works without an agent too.

Contract: no method raises (a failure is one GpumonWarning and the hooks go quiet); nothing
here imports lightning, transformers or torch.
"""

import contextlib
import os
import time

from gpumon._monitor import Monitor, _warn_once, start

_perf = time.perf_counter
_thread_time = time.thread_time


@contextlib.contextmanager
def _rank_env(rank, local_rank, world_size):
    """RANK / LOCAL_RANK / WORLD_SIZE set from the trainer while gpumon.start() reads them
    (its hello), for launchers that do not export them; what the environment has wins, and
    the environment is restored afterwards."""
    added = []
    for name, value in (("RANK", rank), ("LOCAL_RANK", local_rank), ("WORLD_SIZE", world_size)):
        if value is not None and name not in os.environ:
            os.environ[name] = str(int(value))
            added.append(name)
    try:
        yield
    finally:
        for name in added:
            os.environ.pop(name, None)


class TrainerHooks:
    """Turns begin/end-of-step hooks into gpumon steps with their data wait.

    monitor: a Monitor to use (the caller closes it), or None to start one when training
      starts (closed when it ends); start_kwargs go to gpumon.start().
    adapt_loader: False, True, or a dict of the adaptive loader's options
      (docs/adaptive-loader.md): tune the train DataLoader between epochs.
    Not thread-safe: a trainer calls its hooks from the training thread.
    """

    def __init__(self, monitor=None, adapt_loader=False, **start_kwargs):
        if monitor is not None and not isinstance(monitor, Monitor):
            raise TypeError("monitor must be a gpumon.Monitor (from gpumon.start()), not %s"
                            % type(monitor).__name__)
        if adapt_loader and not isinstance(adapt_loader, (bool, dict)):
            raise TypeError("adapt_loader must be True, False or a dict of options")
        self.monitor = monitor
        self._owned = monitor is None
        self._start_kwargs = start_kwargs
        self._gap_start = None  # perf_counter() when the loop last left a step
        self._gap_cpu = None  # this thread's CPU time then (loading without workers)
        self._step_ctx = None  # the entered `mon.step()` of the step in progress
        self._adapt_options = (dict(adapt_loader) if isinstance(adapt_loader, dict)
                               else {} if adapt_loader else None)
        self.adaptive = None  # the AdaptiveLoader tuning the trainer's loader, once known
        self._meter = None  # the epoch in progress, measured for it

    def train_started(self, rank=None, local_rank=None, world_size=None):
        try:
            if self._owned and (self.monitor is None or self.monitor._closed):
                with _rank_env(rank, local_rank, world_size):
                    self.monitor = start(**self._start_kwargs)
            self._gap_start = _perf()
        except Exception as e:
            self._fail(e)

    def epoch_started(self):
        if self._adapt_options is not None:
            from gpumon._adaptive_loader import _EpochMeter
            self._meter = _EpochMeter()
            self._gap_start, self._gap_cpu = _perf(), _thread_time()
        if self.monitor is None:
            return
        try:
            self.monitor._epoch_start()
            self._gap_start = _perf()
        except Exception as e:
            self._fail(e)

    def epoch_ended(self, loader):
        """The trainer's epoch is over and `loader` is its train DataLoader: the adaptive
        loader (with adapt_loader) judges the epoch and retunes the loader for the next."""
        meter, self._meter = self._meter, None
        if meter is None or loader is None:
            return
        try:
            from gpumon._adaptive_loader import AdaptiveLoader
            if self.adaptive is None or self.adaptive.loader is not loader:
                mon = self.monitor if self.monitor is not None else Monitor()
                self.adaptive = AdaptiveLoader(mon, loader, **self._adapt_options)
            self.adaptive._trainer_epoch_ended(meter)
        except Exception as e:
            self._adapt_options = None
            _warn_once("adaptive-loader", "the adaptive loader stopped after an internal "
                       "error: %r" % (e,))

    def outside_work_done(self):
        """The trainer finished work between steps that is not the loader's (validation,
        logging, a checkpoint): the data wait counts from here."""
        if self._gap_start is not None and self._step_ctx is None:
            self._gap_start, self._gap_cpu = _perf(), _thread_time()

    def step_began(self):
        if self.adaptive is not None and self.adaptive._lent is not None:
            self.adaptive._trainer_step_began()  # the epoch's iterator is built
        meter = self._meter
        if meter is not None and self._gap_start is not None:
            now = _perf()
            meter.add_wait(now - self._gap_start, _thread_time() - (self._gap_cpu or 0.0))
            if meter.startup_s is None:
                meter.startup_s = meter.wait_s
            meter.sample(None, now)
        mon = self.monitor
        if mon is None or not mon.active:
            self._gap_start = None
            return
        try:
            if self._step_ctx is not None:  # a step that never ended (a skipped batch)
                self.step_ended()
            if self._gap_start is not None:
                mon._add_data_wait(_perf() - self._gap_start)
            ctx = mon.step()
            ctx.__enter__()
            self._step_ctx = ctx
        except Exception as e:
            self._fail(e)

    def step_ended(self):
        ctx, self._step_ctx = self._step_ctx, None
        if ctx is None and self._meter is None:
            return
        if ctx is not None:
            try:
                ctx.__exit__(None, None, None)
            except Exception as e:
                self._fail(e)
        self._gap_start, self._gap_cpu = _perf(), _thread_time()
        if self._meter is not None:
            self._meter.end = self._gap_start  # the epoch's wall time ends with its last step

    def train_ended(self):
        if self.adaptive is not None:
            self.adaptive._trainer_step_began()  # the user's generator back on the loader
        self.step_ended()
        self._gap_start = None
        if self._owned and self.monitor is not None:
            self.monitor.close()  # idempotent, never raises

    def _fail(self, error):
        _warn_once("callback", "callback disabled after an internal error: %r" % (error,))
        self._step_ctx = None
        self._gap_start = None
        if self.monitor is not None:
            self.monitor._switch_off()  # the Monitor's own off switch (as Monitor._fail)
