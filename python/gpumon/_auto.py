# SPDX-License-Identifier: MIT
"""Zero-code instrumentation (docs/python.md, "Without changing the script"): the steps of a
training script that never imports gpumon, from two places every PyTorch loop passes through.

- A step ends when the optimizer steps: torch's global post-step hook where torch has one
  (2.0 and later), else each Optimizer class's step() wrapped at its first instance (torch 1.13,
  as torch's own profiler hook does). Gradient accumulation (several backward passes, one
  optimizer step) is one step. With several optimizers (a GAN's two) the first one to step
  leads: a step ends when it steps again; another takes the lead when it steps twice in a row
  without it, or once it is gone.
- Data wait is the time spent in a DataLoader iterator's __next__ while autograd is on
  (validation loops run under no_grad and are not a training step's wait); a DataLoader's
  __iter__ begins an epoch (the time before its first batch is not a step).

Nothing happens until torch is imported (an import hook waits for it); the Monitor is made at the
first batch or optimizer step, when the script has chosen its device. A script that calls
gpumon.start() itself (or a trainer callback that does) is not counted twice: the hooks stand
back and its own calls count. Every hook body runs under a try: an exception turns the hooks
off with one GpumonWarning, and the training goes on. The hooks never touch a tensor, so what the
training computes is unchanged.
"""

import functools
import importlib.util
import sys
import time
import weakref

from gpumon import _monitor

_installed = False
_off = False  # after an error in a hook, or once the script's own Monitor counts
_mon = None  # the Monitor of the hooks, once made
# Its per-step C calls, looked up once (a step costs what the explicit API's costs): None
# until the Monitor is made, and again once the hooks stand back.
_step = None
_add_wait = None
_wait = 0.0  # the data wait of the step in progress, handed to the clock when it ends
_lead = None  # weakref to the optimizer whose step ends a training step
_others = {}  # id(optimizer) -> its steps since the lead's last one
_depth = 0  # nested optimizer steps (a subclass calling super().step()): only the outer counts


def install():
    """Sets the hooks up now if torch is imported, else when it is. Idempotent."""
    global _installed
    if _installed:
        return
    _installed = True
    torch = sys.modules.get("torch")
    if torch is not None and hasattr(torch, "optim"):
        _on_torch(torch)
    else:
        sys.meta_path.insert(0, _TorchFinder())


class _TorchFinder:
    """A meta path finder that lets `import torch` run as usual, then sets the hooks up."""

    def find_spec(self, name, path=None, target=None):
        if name != "torch":
            return None
        try:
            sys.meta_path.remove(self)
        except ValueError:
            return None
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        exec_module = spec.loader.exec_module

        def run_then_hook(module):
            exec_module(module)  # torch's own errors pass through untouched
            _on_torch(module)

        spec.loader.exec_module = run_then_hook
        return spec


def _fail(what, error):
    """An exception in a hook: every hook stands back, with one warning."""
    stand_back()
    _monitor._warn_once("auto", "step hooks off after an error in %s: %r" % (what, error))


def _guard(what):
    def wrap(fn):
        @functools.wraps(fn)
        def guarded(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except Exception as e:
                _fail(what, e)
                return None
        return guarded
    return wrap


def stand_back():
    """The hooks count nothing from now on (the script started its own Monitor, or a hook
    failed)."""
    global _off, _step, _add_wait
    _off = True
    _step = _add_wait = None


@_guard("setting up the hooks")
def _on_torch(torch):
    post_hook = getattr(getattr(torch.optim, "optimizer", None),
                        "register_optimizer_step_post_hook", None)
    if post_hook is not None:
        post_hook(_optimizer_stepped)
    else:
        _wrap_optimizer_init(torch.optim.Optimizer)
    data = torch.utils.data
    _wrap_loader(data.DataLoader, data.dataloader._BaseDataLoaderIter, torch.is_grad_enabled)


@_guard("making the Monitor")
def _make_monitor():
    """Makes the hooks' Monitor at their first use, unless they stand back."""
    global _mon, _step, _add_wait
    if _off or _mon is not None or _monitor._explicit_started:
        return
    _mon = _monitor._start_auto()
    if _mon.active and not _off:
        _step = _mon.step
        _add_wait = _mon._clock.wait_call(weakref.ref(_mon))


def _optimizer_stepped(optimizer, args=None, kwargs=None):
    """After an optimizer's step (torch's post-step hook takes it as it is): ends the training
    step when that optimizer leads. The common case, one optimizer already leading, is kept
    short: it runs once a step."""
    global _wait
    step = _step
    if step is None:
        if _off or _mon is not None:
            return
        _make_monitor()
        step = _step
        if step is None:
            return
    try:
        lead = _lead
        if lead is None or lead() is not optimizer:
            if not _takes_the_lead(optimizer):
                return
        elif _others:
            _others.clear()
        if _wait:
            _add_wait(_wait)
            _wait = 0.0
        step()
    except Exception as e:
        _fail("an optimizer step", e)


def _takes_the_lead(optimizer):
    """Whether `optimizer`, not the leader, leads from now on (see the module's docstring)."""
    global _lead
    lead = _lead() if _lead is not None else None
    if lead is not None:
        n = _others.get(id(optimizer), 0) + 1
        if n < 2:
            _others[id(optimizer)] = n
            return False
    _lead = weakref.ref(optimizer)
    _others.clear()
    return True


def _wrap_optimizer_init(optimizer_class):
    """torch < 2.0: wraps each Optimizer class's step() when its first instance is made."""
    init = optimizer_class.__init__
    if getattr(init, "_gpumon_wrapped", False):
        return

    @functools.wraps(init)
    def __init__(self, *args, **kwargs):
        init(self, *args, **kwargs)
        _wrap_step(type(self))

    __init__._gpumon_wrapped = True
    optimizer_class.__init__ = __init__


@_guard("wrapping an optimizer")
def _wrap_step(cls):
    step = cls.__dict__.get("step")
    if step is None or getattr(step, "_gpumon_wrapped", False):
        return

    @functools.wraps(step)
    def wrapped(self, *args, **kwargs):
        global _depth
        _depth += 1
        try:
            result = step(self, *args, **kwargs)
        finally:
            _depth -= 1
        if _depth == 0:
            _optimizer_stepped(self)
        return result

    wrapped._gpumon_wrapped = True
    cls.step = wrapped


def _wrap_loader(loader_class, iterator_class, grad_enabled):
    iter_ = loader_class.__iter__
    next_ = iterator_class.__next__
    if getattr(next_, "_gpumon_wrapped", False):
        return
    clock = time.perf_counter

    @functools.wraps(iter_)
    def __iter__(self):
        it = iter_(self)  # the loader's own errors pass through untouched
        if not _off and grad_enabled():
            _epoch_began()
        return it

    @functools.wraps(next_)
    def __next__(self):
        global _wait
        if _step is None:
            if _off or _mon is not None:
                return next_(self)
            _make_monitor()
            if _step is None:
                return next_(self)
        if not grad_enabled():
            return next_(self)
        began = clock()
        try:
            return next_(self)  # the loader's own errors pass through untouched
        finally:
            _wait += clock() - began

    __iter__._gpumon_wrapped = __next__._gpumon_wrapped = True
    loader_class.__iter__ = __iter__
    iterator_class.__next__ = __next__


@_guard("a DataLoader")
def _epoch_began():
    global _wait
    _make_monitor()
    if _step is not None:
        if _wait:  # fetched in this step already: begin_epoch() then leaves its start alone
            _add_wait(_wait)
            _wait = 0.0
        _mon._epoch_start()
