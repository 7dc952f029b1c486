# SPDX-License-Identifier: MIT
"""mon.wrap(loader, adapt=True): a DataLoader that retunes its workers between epochs
(docs/adaptive-loader.md).

Each epoch it measures the data-wait share (the time the training loop spent blocked in
next() over the epoch's wall time), the step rate, the loading's CPU use and the workers'
memory; after an epoch that waited more than `target_wait_share` it sets the user's own
DataLoader's num_workers / prefetch_factor for the next one:
- first a jump from a model (as tf.data's AUTOTUNE): one batch takes P seconds to load in one
  worker and C seconds to consume, so ceil(P / C * margin) workers keep the loop fed;
- then hill-climbing; when more workers did not raise the step rate by `min_gain` it goes back
  to the smallest configuration within `tolerance` of the best one seen, stops exploring and
  says so (`loader_limited`: a lock in the Dataset, a slow disk);
- never beyond the CPU and RAM budgets (_loader_budget.py), and back when the workers exceed
  them.
A loader that waits less than the target is left alone. Sample order and content never change:
the same loader object keeps its sampler, generator, dataset and batch size; only the iterator
of the next epoch is built differently (torch reads num_workers and prefetch_factor when it
builds one, and DataLoader.__setattr__ allows setting them). A live iterator is never touched.
An IterableDataset is measured only: its content depends on the worker count.

Works with an inactive Monitor (no agent): only the `action` messages are not sent. Errors of
the user's loader pass through; an error of gpumon's own is one GpumonWarning, after which the
loader is only iterated. Not thread-safe: iterate it from one thread.
"""

import inspect
import json
import math
import sys
import time
import warnings
import weakref

from gpumon import _loader_budget as budget_mod
from gpumon._actions import action_line
from gpumon._monitor import _warn_once

_SAMPLE_INTERVAL_S = 0.5  # how often the workers' CPU times are read during an epoch
_PSS_INTERVAL_S = 2.0  # how often one worker's PSS is read
# Before its workers were measured, one is priced at this share of the training process's PSS:
# a forked worker shares the training process's pages (a Dataset held in memory included)
# until it writes them, and PSS splits a shared page between the processes that map it, so a
# worker's PSS is its own pages plus at most half of the shared ones (1 / (n + 1) of them with
# n workers). Pricing it at the whole PSS left a process holding a large Dataset no worker at
# all; a quarter leaves room for the pages reference counting copies. The first epoch with
# workers measures them, and the RAM check cuts back where they hold more.
UNMEASURED_WORKER_PSS_SHARE = 0.25
_RAM_GROWTH = 1.25  # a RAM budget this much larger than when `limited` was set clears it


def _round(value, digits=4):
    if value is None or isinstance(value, int):
        return value
    return float("%.*g" % (digits, value))


class _EpochMeter:
    """Times next() and samples the workers' CPU time and PSS while one epoch runs."""

    def __init__(self):
        self.start = time.perf_counter()
        self.end = None
        self.batches = 0
        self.wait_s = 0.0
        self.wait_cpu_s = 0.0  # this thread's CPU time inside next(): loading in-process
        self.startup_s = None  # building the iterator and waiting for its first batch
        self.first = None  # (time, batches, {pid: cpu_s}) at the first sample
        self.last = None
        self.pss_peak = None  # the peak of the workers' summed PSS
        self._pss = {}  # pid: its latest PSS
        self._next_sample = 0.0
        self._next_pss = 0.0
        self._pss_turn = 0

    def add_wait(self, wall_s, cpu_s):
        self.batches += 1
        self.wait_s += wall_s
        self.wait_cpu_s += cpu_s

    def sample(self, iterator, now):
        """Reads the workers' CPU time and PSS, at most every _SAMPLE_INTERVAL_S: those of
        `iterator` (a torch DataLoader iterator), else this process's children that run the
        same executable (the workers a trainer's loader forked)."""
        if now < self._next_sample:
            return
        self._next_sample = now + _SAMPLE_INTERVAL_S
        if iterator is not None:
            pids = [w.pid for w in getattr(iterator, "_workers", ()) or () if w.pid]
        else:
            pids = budget_mod.python_children()
        if not pids:
            return
        cpu = {}
        for pid in pids:
            seconds = budget_mod.cpu_seconds(pid)
            if seconds is not None:
                cpu[pid] = seconds
        point = (now, self.batches, cpu)
        if self.first is None:
            self.first = point
        self.last = point
        if now >= self._next_pss:
            # Reading smaps_rollup walks the worker's page tables (milliseconds for a process
            # that imported torch): one worker per _PSS_INTERVAL_S, in turn; the others count
            # with their latest reading, or the mean of those read.
            self._next_pss = now + _PSS_INTERVAL_S
            pid = pids[self._pss_turn % len(pids)]
            self._pss_turn += 1
            value = budget_mod.pss_bytes(pid)
            if value is not None:
                self._pss[pid] = value
            known = [self._pss[p] for p in pids if p in self._pss]
            if known:
                total = sum(known) + (len(pids) - len(known)) * sum(known) // len(known)
                if self.pss_peak is None or total > self.pss_peak:
                    self.pss_peak = total

    def record(self, epoch, num_workers, prefetch_factor, complete):
        """The epoch's figures. data_wait_share and steps_per_s count the whole epoch; the
        per-batch figures and steady_* leave out the start-up (building the iterator, which
        forks the workers, and the first batch): that is paid once an epoch whatever the
        worker count, so the tuning judges the batches after it."""
        end = self.end if self.end is not None else time.perf_counter()
        wall = max(end - self.start, 1e-9)
        startup = self.startup_s if self.startup_s is not None else 0.0
        n = max(self.batches - 1, 1)
        steady_wall = max(wall - startup, 1e-9)
        steady_wait = max(self.wait_s - startup, 0.0)
        rec = {"epoch": epoch, "num_workers": num_workers, "prefetch_factor": prefetch_factor,
               "complete": complete, "batches": self.batches, "wall_s": wall,
               "wait_s": self.wait_s, "startup_s": startup,
               "data_wait_share": self.wait_s / wall, "steps_per_s": self.batches / wall,
               "steady_wait_share": steady_wait / steady_wall,
               "steady_steps_per_s": (self.batches - 1) / steady_wall,
               "wait_per_batch_s": steady_wait / n, "step_s": (steady_wall - steady_wait) / n,
               "load_cpu_per_batch_s": None, "worker_cpu_cores": None,
               "worker_pss_bytes": self.pss_peak}
        if num_workers == 0:
            rec["load_cpu_per_batch_s"] = self.wait_cpu_s / max(self.batches, 1)
        elif self.first is not None and self.last is not None and self.last[1] > self.first[1]:
            (t0, b0, c0), (t1, b1, c1) = self.first, self.last
            used = sum(c1[p] - c0[p] for p in c1 if p in c0)
            rec["load_cpu_per_batch_s"] = used / (b1 - b0)
            rec["worker_cpu_cores"] = used / max(t1 - t0, 1e-9)
        return rec


class _Epoch:
    """One epoch of an AdaptiveLoader: what iter(adaptive_loader) returns. It runs in the
    training thread, as the user's loop calls next(). The first next() applies the pending
    settings and builds the loader's iterator; StopIteration, close() or the garbage
    collection of the epoch (a `break`, an exception in the loop) end it and judge it. An
    error of the user's loader raised in next() passes through and the epoch goes on at the
    next next(), as a DataLoader iterator does."""

    def __init__(self, owner):
        self._owner = owner
        self._meter = None
        self._it = self._source = self._stage = None
        self._done = False

    def __iter__(self):
        return self

    def _begin(self):
        owner = self._owner
        owner._join_stage()
        owner._guard(owner._apply_pending)
        self._meter = meter = _EpochMeter()
        c0 = time.thread_time()
        try:
            self._it = self._source = owner._open()  # the start-up (the fork) is waiting too
        except BaseException:
            self._done = True
            raise
        meter.wait_s += time.perf_counter() - meter.start
        meter.wait_cpu_s += time.thread_time() - c0
        if owner.prefetch_thread:
            from gpumon._prefetch import PrefetchStage
            self._source = self._stage = owner._stage = PrefetchStage(
                self._it, owner.prefetch_depth, owner.max_prefetch_depth)

    def __next__(self):
        if self._done:
            raise StopIteration
        if self._meter is None:
            self._begin()
        meter = self._meter
        clock, cpu = time.perf_counter, time.thread_time
        t0, c0 = clock(), cpu()
        try:
            batch = next(self._source)
        except StopIteration:
            meter.end = t0  # the last step ended; the workers' shutdown is not waiting
            self._finish(True)
            raise StopIteration from None
        except BaseException:
            meter.wait_s += clock() - t0  # the user's error: waited for, not a batch
            meter.wait_cpu_s += cpu() - c0
            # The error's traceback keeps this frame: without `self` in it, a loop the error
            # left ends the epoch (garbage) as a `break` does, while one that catches it can
            # go on with the next batch.
            self = None  # (not `del self`, which pyflakes misreads in the else: below)
            raise
        else:
            t1 = clock()
            meter.add_wait(t1 - t0, cpu() - c0)
            if meter.startup_s is None:
                meter.startup_s = meter.wait_s
            self._owner._guard(meter.sample, self._it, t1)
            return batch

    def _finish(self, complete):
        if self._done:
            return
        self._done = True
        stage = self._stage
        self._it = self._source = self._stage = None
        if self._meter is None:
            return
        if stage is not None:
            stage.close()  # at most JOIN_S here; the next epoch joins it to the end
        self._owner._guard(self._owner._epoch_ended, self._meter, complete, stage)

    def close(self):
        """Ends the epoch where it is (idempotent)."""
        self._finish(False)

    def __del__(self):
        try:
            self._finish(False)
        except Exception:
            pass


def _default_prefetch_factor(loader):
    """The prefetch_factor the loader's class takes with num_workers=0 (2 in torch 1.x, None
    from 2.0, which refuses any other value without workers): the default of the first
    __init__ in its classes that names it (a subclass may take **kwargs)."""
    for cls in type(loader).__mro__:
        try:
            param = inspect.signature(cls.__init__).parameters.get("prefetch_factor")
        except (TypeError, ValueError):
            continue
        if param is not None and param.default is not inspect.Parameter.empty:
            return param.default
    return 2


def _untunable_reason(loader):
    for name in ("num_workers", "prefetch_factor", "dataset"):
        if not hasattr(loader, name):
            return "not a torch DataLoader (no %s)" % name
    torch = sys.modules.get("torch")
    iterable = getattr(getattr(getattr(torch, "utils", None), "data", None), "IterableDataset",
                       None)
    if iterable is not None and isinstance(loader.dataset, iterable):
        return "an IterableDataset: what it yields depends on the number of workers"
    return None


class AdaptiveLoader:
    """The loader mon.wrap(loader, adapt=True) returns; iterate it once per epoch.

    Readable state: num_workers and prefetch_factor (the loader's, now), epochs (one dict per
    epoch measured: data_wait_share, steps_per_s, the workers' CPU cores and PSS bytes, ...),
    actions (one dict per action taken: the `action` message), budget (the latest budgets),
    limited (True once more workers stopped helping), untunable (why it only measures, or None).
    """

    def __init__(self, mon, loader, target_wait_share=0.10, max_workers=None,
                 reserve_cores=1.0, ram_fraction=0.5, margin=1.5, min_gain=1.10,
                 tolerance=0.05, max_prefetch_factor=8, min_batches=8,
                 prefetch_thread=False, prefetch_depth=2, max_prefetch_depth=16):
        if not 0.0 < target_wait_share < 1.0:
            raise ValueError("target_wait_share must be in (0, 1), not %r" % target_wait_share)
        if max_workers is not None and int(max_workers) < 0:
            raise ValueError("max_workers must be >= 0, not %r" % max_workers)
        if not 0.0 < ram_fraction <= 1.0:
            raise ValueError("ram_fraction must be in (0, 1], not %r" % ram_fraction)
        if margin < 1.0 or min_gain < 1.0 or not 0.0 <= tolerance < 1.0:
            raise ValueError("margin and min_gain must be >= 1 and tolerance in [0, 1)")
        if not 1 <= int(prefetch_depth) <= int(max_prefetch_depth):
            raise ValueError("prefetch_depth must be in [1, max_prefetch_depth]")
        self._mon = mon
        self.loader = loader
        self.target_wait_share = float(target_wait_share)
        cores = budget_mod.cores() // budget_mod.local_world_size()
        self.max_workers = int(max_workers) if max_workers is not None else max(2, 4 * cores)
        self.reserve_cores = float(reserve_cores)
        self.ram_fraction = float(ram_fraction)
        self.margin = float(margin)
        self.min_gain = float(min_gain)
        self.tolerance = float(tolerance)
        self.max_prefetch_factor = int(max_prefetch_factor)
        self.min_batches = int(min_batches)
        self.prefetch_thread = bool(prefetch_thread)
        self.prefetch_depth = int(prefetch_depth)  # the stage's depth, adapted in an epoch
        self.max_prefetch_depth = int(max_prefetch_depth)
        self.epochs = []
        self.actions = []
        self.budget = None
        self.limited = False
        self._limited_at = None  # (reason, budget) when `limited` was set
        self.untunable = _untunable_reason(loader)
        self._failed = False
        self._pending = None  # (num_workers, prefetch_factor) for the next epoch's iterator
        self._probe = None  # the epoch measured before the latest raise, to judge its gain
        self._reseed = None  # base seed for a rebuilt persistent iterator (see _open)
        self._stage = None  # the latest epoch's prefetch stage, joined before the next epoch
        self._lent = None  # (the user's generator, the lent one) in a trainer's loop
        self._default_pf = _default_prefetch_factor(loader)

    @property
    def num_workers(self):
        return getattr(self.loader, "num_workers", None)

    @property
    def prefetch_factor(self):
        return getattr(self.loader, "prefetch_factor", None)

    def __len__(self):
        return len(self.loader)

    def __iter__(self):
        mon = self._mon
        epoch = _Epoch(self)
        if mon.active and mon._clock is not None:
            mon._epoch_start()
            # The monitor's own timing of each next() (python/src/step_calls.h) stays.
            return mon._clock.timed_iter(epoch, weakref.ref(mon))
        return epoch

    def _join_stage(self):
        """Waits until the previous epoch's prefetch thread ended: after a `break` it may
        still be inside the loader's next(), and a persistent iterator is the object the next
        epoch resets (or _apply_pending shuts down)."""
        stage, self._stage = self._stage, None
        if stage is not None:
            stage.join()

    def _open(self):
        loader = self.loader
        with warnings.catch_warnings():
            # torch warns when workers outnumber the cores; the budgets here count the CPU
            # they use instead, so workers that mostly wait may outnumber them.
            warnings.filterwarnings("ignore", message="This DataLoader will create",
                                    category=UserWarning)
            saved = self._lend_seed()
            try:
                return iter(loader)
            finally:
                self._restore_generator(saved)

    def _lend_seed(self):
        """A persistent iterator was dropped (_apply_pending): a new iterator draws its
        workers' base seed from loader.generator (or torch's global generator), which a reset
        one does not, and the sampler (which holds its own reference to the user's generator,
        or draws from the global one) would then shuffle from a different state. Until the
        next iterator is built, loader.generator is one of its own, seeded with the old
        iterator's base seed, so the order stays. Returns what _restore_generator puts back,
        or None."""
        seed, self._reseed = self._reseed, None
        loader = self.loader
        torch = sys.modules.get("torch")
        if seed is None or torch is None or not hasattr(loader, "generator"):
            return None
        saved = loader.generator
        own = torch.Generator()
        own.manual_seed(int(seed))
        loader.generator = own
        return saved, own

    def _restore_generator(self, lent):
        if lent is not None and self.loader.generator is lent[1]:
            self.loader.generator = lent[0]

    def _apply_pending(self):
        if self._pending is None:
            return
        workers, prefetch = self._pending
        self._pending = None
        loader = self.loader
        old = getattr(loader, "_iterator", None)
        if old is not None and getattr(loader, "persistent_workers", False):
            # Its workers were started with the old settings: drop it (it is not live between
            # epochs) so the next epoch builds one with the new ones.
            self._reseed = getattr(old, "_base_seed", None)
            loader._iterator = None
            shutdown = getattr(old, "_shutdown_workers", None)
            if shutdown is not None:
                shutdown()
        loader.num_workers = workers
        loader.prefetch_factor = prefetch

    def _guard(self, fn, *args):
        if self._failed:
            return
        try:
            fn(*args)
        except Exception as e:
            self._failed = True
            _warn_once("adaptive-loader", "the adaptive loader stopped adapting after an "
                       "internal error: %r" % (e,))

    # A trainer's loop (the Lightning / Hugging Face callbacks, _callback_core.py): the
    # trainer iterates the loader itself and the callback measures around its hooks.

    def _trainer_epoch_ended(self, meter):
        """The trainer finished an epoch that `meter` measured: decide, and set the loader
        for the next one now (the trainer builds its iterator when that epoch starts). A
        dropped persistent iterator's seed is lent to the loader's generator until
        _trainer_step_began, when the trainer has built the next iterator."""
        self._trainer_step_began()
        self._guard(self._epoch_ended, meter, True)
        self._guard(self._apply_pending)
        if not self._failed and self._reseed is not None:
            try:
                self._lent = self._lend_seed()
            except Exception:
                self._lent = None

    def _trainer_step_began(self):
        """The trainer's first step of an epoch (or its end): its iterator is built, the
        user's generator goes back on the loader."""
        lent, self._lent = self._lent, None
        if lent is not None:
            self._guard(self._restore_generator, lent)

    # Between epochs: what to change.

    def _epoch_ended(self, meter, complete, stage=None):
        rec = meter.record(len(self.epochs) + 1, self.num_workers, self.prefetch_factor,
                           complete)
        self.epochs.append(rec)
        if stage is not None:
            self._stage_ended(rec, stage)
        if self.untunable is not None or rec["batches"] < self.min_batches:
            return
        self._decide(rec)

    def _stage_ended(self, rec, stage):
        """Says what the prefetch stage did: once when it first ran, then when an epoch
        deepened it (never more than once an epoch)."""
        first = not any(a["action"] == "loader_prefetch" for a in self.actions)
        before, self.prefetch_depth = self.prefetch_depth, stage.depth
        rec["prefetch_depth"] = stage.depth
        if not first and stage.depth == before:
            return
        empty = stage.empty_gets / max(stage.gets, 1)
        self._act("loader_prefetch", rec, "data_wait" if stage.depth != before else None,
                  {"empty_share": _round(empty), "batches_waiting_for_room": stage.full_puts,
                   "data_wait_share": _round(rec["data_wait_share"])},
                  "prefetch thread in epoch %d: depth %d%s; the loop found its queue empty "
                  "for %d %% of the batches"
                  % (rec["epoch"], before, "" if stage.depth == before
                     else " -> %d (the loader ran ahead at times)" % stage.depth,
                     round(empty * 100)),
                  prefetch_depth=stage.depth)

    def _decide(self, rec):
        workers, prefetch = rec["num_workers"], rec["prefetch_factor"]
        pss = rec["worker_pss_bytes"]
        self.budget = budget = budget_mod.budgets(self.reserve_cores, self.ram_fraction,
                                                   pss or 0)
        evidence = self._evidence(rec, budget)
        floor = 1 if getattr(self.loader, "persistent_workers", False) else 0

        # Over a budget: fewer workers, whatever the wait.
        over = []
        if workers and budget["ram_budget_bytes"] is not None and pss and \
                pss > budget["ram_budget_bytes"]:
            over.append(("RAM", pss, budget["ram_budget_bytes"],
                         int(workers * budget["ram_budget_bytes"] // pss)))
        cores_used = rec["worker_cpu_cores"]
        if workers and cores_used and cores_used > budget["cpu_budget_cores"]:
            over.append(("CPU", cores_used, budget["cpu_budget_cores"],
                         int(workers * budget["cpu_budget_cores"] // cores_used)))
        if over:
            new = max(min(o[3] for o in over), floor)
            if new < workers:
                what = "; ".join("%s %s > %s" % (o[0], _amount(o[0], o[1]), _amount(o[0], o[2]))
                                 for o in over)
                self._retune(rec, new, prefetch, "budget", evidence,
                             "the workers went over the budget (%s): num_workers %d -> %d"
                             % (what, workers, new))
                self._probe = None
                return

        share = rec["steady_wait_share"]
        if share <= self.target_wait_share:
            self._probe = None  # fast enough: left as it is
            return

        self._budgets_grew(budget)
        probe, self._probe = self._probe, None
        if probe is not None and not self.limited:
            gain = rec["steady_steps_per_s"] / max(probe["steady_steps_per_s"], 1e-9)
            if gain < self.min_gain:
                self._settle(rec, probe, gain, evidence)
                return
        if self.limited:
            return

        # The model: P seconds to load one batch in one worker, C seconds to consume one.
        consume = max(rec["step_s"], 1e-4)
        if workers == 0:
            production = rec["wait_per_batch_s"]
        else:  # the workers are the bottleneck: each delivers a batch every (wait + C) * w
            production = workers * (rec["wait_per_batch_s"] + consume)
        needed = int(math.ceil(production / consume * self.margin))
        if needed <= workers:
            needed = workers + max(1, workers // 2)  # the model fell short: climb
        if pss and workers:
            per_worker_pss = pss / workers  # measured
        else:
            own = budget_mod.pss_bytes()
            per_worker_pss = own * UNMEASURED_WORKER_PSS_SHARE if own else None
        allowed = budget_mod.workers_allowed(budget, rec["load_cpu_per_batch_s"], production,
                                             per_worker_pss)
        cap = self.max_workers if allowed is None else min(self.max_workers, allowed)
        new = max(min(needed, cap), floor)
        evidence.update(production_s_per_batch=_round(production), workers_needed=needed,
                        workers_allowed=cap)
        if new > workers:
            self._retune(rec, new, prefetch if workers else max(2, prefetch or 2), "data_wait",
                         evidence,
                         "data wait %d %% of epoch %d (%.3g steps/s; a batch takes %.3g ms to "
                         "load, %.3g ms to consume): num_workers %d -> %d%s"
                         % (round(rec["data_wait_share"] * 100), rec["epoch"],
                            rec["steady_steps_per_s"],
                            production * 1e3, consume * 1e3, workers, new,
                            "" if new == needed else " (at most %d: max_workers and the budgets)" % cap))
            self._probe = rec
        elif workers and prefetch and prefetch < self.max_prefetch_factor:
            bigger = min(prefetch * 2, self.max_prefetch_factor)
            self._retune(rec, workers, bigger, "data_wait", evidence,
                         "data wait %d %% of epoch %d with num_workers %d, as many as "
                         "max_workers and the budgets allow (%d): prefetch_factor %d -> %d"
                         % (round(share * 100), rec["epoch"], workers, cap, prefetch, bigger))
            self._probe = rec
        else:
            self._set_limited("budget", budget)
            self._act("loader_limited", rec, "budget", evidence,
                      "data wait %d %% of epoch %d, but the budgets allow no more than %d "
                      "workers (CPU %.3g cores, RAM %s): left at num_workers %d"
                      % (round(share * 100), rec["epoch"], cap, budget["cpu_budget_cores"],
                         _amount("RAM", budget["ram_budget_bytes"]), workers),
                      num_workers=workers, prefetch_factor=prefetch)

    def _settle(self, rec, probe, gain, evidence):
        """More workers (or prefetching) did not raise the step rate: back to the smallest
        configuration within `tolerance` of the best one seen, and explore no further."""
        best = {}
        for r in self.epochs:
            if r["batches"] >= self.min_batches and (r["complete"] or r is rec):
                key = (r["num_workers"], r["prefetch_factor"] or 0)
                best[key] = max(best.get(key, 0.0), r["steady_steps_per_s"])
        top = max(best.values())
        workers, prefetch = min(k for k, v in best.items() if v >= top * (1 - self.tolerance))
        prefetch = prefetch or self._default_pf
        evidence.update(steady_steps_per_s_before=_round(probe["steady_steps_per_s"]),
                        num_workers_before=probe["num_workers"],
                        prefetch_factor_before=probe["prefetch_factor"], gain=_round(gain, 3),
                        min_gain=self.min_gain, best_steps_per_s=_round(top))
        now = (rec["num_workers"], rec["prefetch_factor"])
        if (workers, prefetch) != now:
            self._retune(rec, workers, prefetch, "no_gain", evidence,
                         "%s raised the step rate only x%.2f (%.3g -> %.3g steps/s): back to "
                         "num_workers %d, prefetch_factor %s"
                         % (_change(probe, rec), gain, probe["steady_steps_per_s"],
                            rec["steady_steps_per_s"], workers, prefetch))
        self._set_limited("no_gain", self.budget)
        cpu = rec["worker_cpu_cores"]
        self._act("loader_limited", rec, "no_gain", evidence,
                  "%s stopped helping: %s changed the step rate x%.2f "
                  "(needed x%.2f) with %d %% of the epoch still waiting for data, and the "
                  "loading used %s of %.3g budgeted cores: a lock in the Dataset or a slow "
                  "disk; left at num_workers %d"
                  % ("more workers" if probe["num_workers"] != now[0] else "more prefetching",
                     _change(probe, rec), gain, self.min_gain,
                     round(rec["steady_wait_share"] * 100),
                     "%.2g" % cpu if cpu is not None else "an unknown share",
                     self.budget["cpu_budget_cores"], workers),
                  num_workers=workers, prefetch_factor=prefetch)

    def _set_limited(self, reason, budget):
        self.limited = True
        self._limited_at = (reason, dict(budget))

    def _budgets_grew(self, budget):
        """`limited` clears when the budgets grew since it was set: more cores (either
        reason), or, where the budgets were the limit, a RAM budget _RAM_GROWTH times larger
        (free memory moves a little from epoch to epoch)."""
        if not self.limited or self._limited_at is None:
            return
        reason, then = self._limited_at
        grew = budget["cpu_budget_cores"] > then["cpu_budget_cores"] + 1e-6
        ram, ram_then = budget["ram_budget_bytes"], then["ram_budget_bytes"]
        if reason == "budget" and ram is not None and ram_then is not None and \
                ram > ram_then * _RAM_GROWTH:
            grew = True
        if grew:
            self.limited = False
            self._limited_at = None

    def _retune(self, rec, workers, prefetch, reason, evidence, summary):
        if workers == 0:
            prefetch = self._default_pf
        elif prefetch is None:
            prefetch = 2
        self._pending = (workers, prefetch)
        self._act("loader_retuned", rec, reason, evidence, summary, num_workers=workers,
                  prefetch_factor=prefetch, previous_num_workers=rec["num_workers"],
                  previous_prefetch_factor=rec["prefetch_factor"])

    def _act(self, action, rec, reason, evidence, summary, **state):
        mon = self._mon
        active = mon.active
        line = action_line(action, mon._step_number() if active else None, summary,
                           reason=reason, epoch=rec["epoch"], evidence=dict(evidence), **state)
        self.actions.append(json.loads(line))
        if active:
            try:
                mon._send_now(line)
            except Exception as e:
                mon._fail(e)

    @staticmethod
    def _evidence(rec, budget):
        fields = dict(data_wait_share=rec["data_wait_share"], steps_per_s=rec["steps_per_s"],
                      steady_wait_share=rec["steady_wait_share"],
                      steady_steps_per_s=rec["steady_steps_per_s"], startup_s=rec["startup_s"],
                      wait_per_batch_s=rec["wait_per_batch_s"], step_s=rec["step_s"],
                      load_cpu_per_batch_s=rec["load_cpu_per_batch_s"],
                      worker_cpu_cores=rec["worker_cpu_cores"],
                      worker_pss_bytes=rec["worker_pss_bytes"],
                      cpu_budget_cores=budget["cpu_budget_cores"],
                      ram_budget_bytes=budget["ram_budget_bytes"], cores=budget["cores"],
                      local_world_size=budget["local_world_size"])
        return {k: _round(v) for k, v in fields.items() if v is not None}


def _amount(kind, value):
    if value is None:
        return "unknown"
    if kind == "RAM":
        return "%.3g GB" % (value / 1e9)
    return "%.3g cores" % value


def _change(before, after):
    """What changed from one epoch's configuration to another's, in words."""
    parts = []
    for name in ("num_workers", "prefetch_factor"):
        if before[name] != after[name]:
            parts.append("%s %s -> %s" % (name, before[name], after[name]))
    return ", ".join(parts) or "the same configuration"
