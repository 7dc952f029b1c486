# SPDX-License-Identifier: MIT
"""The Python facade over _gpumon.Client: step timing, data-loader wait, allocator stats.

Contract (docs/python.md):
- No public call raises into the training loop. An error inside gpumon becomes one
  GpumonWarning and the monitor becomes a no-op; errors of the user's own loader pass through.
- Nothing here blocks on the agent: _gpumon.Client.send() queues and writes without waiting.
- In a forked child (a DataLoader worker) every call does nothing: the client core's fork
  generation (_gpumon.fork_generation(), bumped by pthread_atfork) is checked instead of
  getpid() every step, by the per-step C calls and the C++ client alike.
- Finding and starting the agent, the hello and the OOM report are the client core's
  (src/client/client_core.h), which the C++ client uses too.
- No thread and no signal handler is started in the training process (a sys.excepthook is
  chained, for the OOM forensics of _oom.py); the one exception is opt-in: the adaptive
  loader's prefetch thread (mon.wrap(loader, adapt=True, prefetch_thread=True), _prefetch.py). torch is never imported by gpumon; it is used only
  when the training script has imported it.
- The memory table (mon.log_table(), _table.py) is off unless asked for; it prints from the
  Monitor's housekeeping, which the step calls then run at every hand-over (about once a
  second), and from a Python step() where no agent is attached.
- The memory capture (_memory_capture.py, on unless capture_memory=False) runs from the
  findings path, which parses the agent's findings only when they changed; only while its
  history window is open do the step calls run the housekeeping at every hand-over.
"""

import atexit
import json
import os
import sys
import time
import warnings
import weakref

from gpumon import _device, _memory_capture, _oom, _table


class GpumonWarning(UserWarning):
    """The only thing gpumon ever raises, as a warning, once per kind of problem."""


_warned = set()

def _warn_once(key, message):
    if key in _warned:
        return
    _warned.add(key)
    try:
        warnings.warn("gpumon: " + message, GpumonWarning, stacklevel=3)
    except Exception:  # a warnings filter set to "error" must not raise into training
        pass


def _env_int(name):
    try:
        return int(os.environ[name])
    except (KeyError, ValueError):
        return None


class _NullContext:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


_NULL = _NullContext()


class _Wrapped:
    """mon.wrap(loader): iterates the loader and times how long each batch keeps us waiting."""

    def __init__(self, mon, iterable):
        self._mon = mon
        self._iterable = iterable

    def __len__(self):
        return len(self._iterable)

    def __iter__(self):
        mon = self._mon
        it = iter(self._iterable)  # the user's errors pass through untouched
        mon._epoch_start()
        # _gpumon.TimedIter times each next(it) in C++ (src: python/src/step_calls.h).
        return mon._clock.timed_iter(it, weakref.ref(mon)) if mon._clock is not None else it


class _CudaTimer:
    """CUDA events for the step clock's GPU timer (src/client/step_clock.h, GpuTimer): record()
    re-records the next event of a small ring and returns its slot (creating an event costs more
    than recording it); elapsed(a, b) is the seconds between two slots once the GPU has passed
    b, read with query(), never a synchronize. The clock has at most 3 events in use at a time.
    """

    RING = 8

    def __init__(self, torch):
        self._ring = [torch.cuda.Event(enable_timing=True) for _ in range(self.RING)]
        self._next = 0

    def record(self):
        slot = self._next
        self._next = (slot + 1) % self.RING
        self._ring[slot].record()
        return slot

    def elapsed(self, begun, ended):
        """The seconds from slot `begun` to slot `ended` once the GPU is past it, else None."""
        end = self._ring[ended]
        if not end.query():
            return None
        return self._ring[begun].elapsed_time(end) / 1000.0


# Seconds between hand-overs of queued steps to the client (sooner once 512 steps wait); None:
# the client core's (_gpumon.HAND_OVER_INTERVAL_S, src/client/hand_over_schedule.h). Tests and
# the A/B bench set another.
_HOUSEKEEPING_INTERVAL = None


class Monitor:
    """Sends this process's steps to the agent. Get one with gpumon.start().

    A Monitor whose `active` is False does nothing (no agent, or disabled after an error).
    """

    # The step clock (src/client/step_clock.h, in the _gpumon extension) times the steps and
    # writes their messages; the calls a step makes (step(), its `with` context, the wrapped
    # loader's next()) are C functions over it (python/src/step_calls.h). GPU step time is
    # measured on at most one step every gpu_interval_s seconds (the others carry gpu_step_s =
    # null): recording and reading CUDA events costs tens of microseconds of CPU, too much for
    # every 10 ms step (docs/PERFORMANCE.md). Allocator stats are read at most every
    # allocator_interval_s.

    def __init__(self, client=None, socket_path=None, allocator_interval_s=1.0, torch=None,
                 oom_dir=None, oom_steps=64, gpu_interval_s=1.0, capture_memory=True,
                 capture_history_steps=20):
        # Bad configuration fails here, before anything else.
        self._capture = (_memory_capture.MemoryCapture(capture_history_steps)
                         if capture_memory else None)
        self._client = client
        self.socket_path = socket_path
        self._generation = None  # the fork generation it was made in (set with a client)
        self._fork_generation = None
        self._clock = None
        self._disconnects = 0
        self._closed = False
        # The agent's live findings (docs/DIAGNOSES.md "Live"): parsed only when they changed.
        self._findings_seq = 0
        self._findings = []
        self._health_score = None
        self._finding_callbacks = []
        self._callback_seq = 0
        self._callback_findings = []  # the findings the callbacks last heard of
        self._oom_dir = oom_dir
        self._torch = torch
        self._device_index = None
        self._device = None
        self._rank = _env_int("RANK")
        self._local_rank = _env_int("LOCAL_RANK")
        self._world_size = _env_int("WORLD_SIZE")
        self._mem_fn = None
        self._mem_interval = allocator_interval_s
        self._gpu_timer = None
        self._gpu_interval = gpu_interval_s
        self._table = None  # the memory table (_table.MemoryTable) while log_table() is on
        self._table_steps = 0  # steps counted by _table_step() (no agent attached)
        if client is None:
            return
        from gpumon import _gpumon
        self._fork_generation = _gpumon.fork_generation
        self._generation = _gpumon.fork_generation()
        # The last oom_steps step messages sent stay in the clock for the OOM bundle.
        interval = _HOUSEKEEPING_INTERVAL or _gpumon.HAND_OVER_INTERVAL_S
        self._clock = _gpumon.StepClock(max(int(oom_steps), 1), interval)
        # mon.step() is a C function (python/src/step_calls.h): a Python method's frame and
        # attribute lookups are cold after a training step's work and cost microseconds. It
        # returns a C context manager for `with mon.step():`.
        me = weakref.ref(self)
        self.step = self._clock.step_call(self._clock.step_scope(me), _NULL, me)
        # Those calls hand the steps to the client themselves, in C++, and call _housekeeping()
        # only when there is news (python/src/py_step_clock.h, hand_over).
        self._clock.attach(client)
        if torch is not None:
            self._attach_torch(torch)
        else:  # started before `import torch`: the device is named when torch appears
            self._clock.keep_housekeeping(True)

    def _attach_torch(self, torch):
        """Times steps on the GPU and reads the allocator when CUDA is in use."""
        self._torch = torch
        mem_fn, timer = None, None
        try:
            if torch.cuda.is_available():
                timer = _CudaTimer(torch)
                device = torch.cuda.current_device()
                self._device_index, self._device = device, "cuda:%d" % device
                mem_fn = lambda: torch.cuda.memory_stats(device)  # noqa: E731
        except Exception as e:  # a broken CUDA setup: steps without GPU time
            timer, mem_fn = None, None
            _warn_once("cuda", "no GPU step time or allocator stats: %s" % e)
        if self._device_index is not None:
            try:
                _oom.attach_observer(torch)
            except Exception as e:
                _warn_once("oom-observer", "torch's OOM observer not attached: %r" % (e,))
        self._configure(mem_fn=mem_fn, gpu_timer=timer)
        if self._device_index is not None and self._findings:  # findings that came before CUDA
            self._capture_findings()

    def _resolve_device(self):
        """For a Monitor started before `import torch`: once torch is imported and has chosen
        (CUDA not available: the CPU; else once the script has initialised CUDA, on the device
        it chose), names the device to the agent (the `device` message, docs/python.md) and
        times steps on it. Never guesses: until then nothing is sent."""
        torch = sys.modules.get("torch")
        if torch is None or not hasattr(torch, "cuda"):
            return
        try:
            if torch.cuda.is_available() and not torch.cuda.is_initialized():
                return  # the script has not chosen its GPU yet
        except Exception:
            pass  # a broken CUDA setup: _hello() names what it can
        self._torch = torch  # once, whatever happens below
        self._keep_housekeeping()
        try:
            from gpumon import _gpumon
            hello = _hello(torch, _gpumon)
            set_hello = getattr(self._client, "set_hello", None)  # a test's stand-in may lack it
            if set_hello is not None:
                set_hello(hello)  # a reconnection says it at once
            fields = json.loads(hello)
            if fields.get("device") is not None:
                self._send_now(_gpumon.device_line(
                    fields.get("torch_version"), fields["device"], fields.get("pci_bus_id"),
                    fields.get("device_uuid")))
            self._attach_torch(torch)
        except Exception as e:  # the steps go on without a device
            _warn_once("device", "the device torch uses is not known: %r" % (e,))

    def _configure(self, **changes):
        """Sets mem_fn (returns torch.cuda.memory_stats()), mem_interval, gpu_timer (record() /
        elapsed(a, b), see _CudaTimer) or gpu_interval, and hands them to the clock."""
        for name, value in changes.items():
            if name not in ("mem_fn", "mem_interval", "gpu_timer", "gpu_interval"):
                raise TypeError("unknown setting %r" % name)
            setattr(self, "_" + name, value)
        if self._clock is None:
            return
        # Only what changed: each setter restarts its own schedule (and the timer's drops the
        # step waiting for its GPU time), so the other must not be reset along with it.
        if "mem_fn" in changes or "mem_interval" in changes:
            self._clock.set_allocator_source(self._mem_fn, self._mem_interval)
        if "gpu_timer" in changes or "gpu_interval" in changes:
            self._clock.set_gpu_timer(self._gpu_timer, self._gpu_interval)

    @property
    def active(self):
        return self._client is not None and self._fork_generation() == self._generation

    def wrap(self, iterable, adapt=False, **adapt_options):
        """Iterate `iterable` (a DataLoader), timing the wait for each batch.

        adapt=True: also retune the DataLoader's num_workers / prefetch_factor between epochs
        within the CPU and RAM budgets (docs/adaptive-loader.md; adapt_options are
        _adaptive_loader.AdaptiveLoader's); it adapts without an agent too."""
        if adapt:
            from gpumon._adaptive_loader import AdaptiveLoader
            return AdaptiveLoader(self, iterable, **adapt_options)
        if adapt_options:
            raise TypeError("options %s need adapt=True" % ", ".join(sorted(adapt_options)))
        if not self.active:
            return iterable
        return _Wrapped(self, iterable)

    def step(self):
        """Marks the end of a step (plain call) or, as `with mon.step():`, times its body.

        A connected Monitor replaces this with the C function of the same name (see __init__):
        this one serves a Monitor that was never active."""
        return _NULL

    def log_table(self, interval_s=2.0, file=None, clock=None):
        """Prints a table every interval_s seconds (None: stops it): per GPU this process uses,
        the time since this call, the step count, utilization, torch's allocated and reserved
        memory (MiB) and temperature ("-" where gpumon has no value; utilization and
        temperature are the node's, read from the table it publishes beside the agent
        socket), to `file` (default sys.stderr),
        each line starting "gpumon: " ("gpumon rank N: " under DDP). It prints from the gpumon
        call of the training thread (a step, a batch fetch) that finds the interval passed,
        at most about once a second with an agent. Works without CUDA or an agent. An error
        stops it with one GpumonWarning. clock: a time.monotonic stand-in (tests).
        A bad interval raises ValueError here, at setup."""
        if interval_s is None:
            self._table = None
        else:
            prefix = "gpumon: " if self._rank is None else "gpumon rank %d: " % self._rank
            node_file = None
            if self.socket_path:
                from gpumon import _gpumon
                node_file = _gpumon.rank_memory_path(self.socket_path)
            self._table = _table.MemoryTable(interval_s, file, clock or time.monotonic, prefix,
                                             node_file)
        self._table_hooks()

    def close(self):
        """Sends what is left and a bye, and disconnects (also run at exit). Idempotent."""
        if self._closed or not self.active:
            return
        self._closed = True
        if self._capture is not None and self._capture.window is not None:
            self._run_capture(self._capture.finish)  # a window still open: its history so far
        try:
            self._clock.finish()
            self._flush_outbox()
            if self._torch is None:  # a short run may end before its housekeeping named it
                self._resolve_device()
            self._client.send('{"type":"bye"}')
            self._client.close(1.0)
        except Exception as e:
            self._fail(e)
        self._switch_off()

    def oom_report(self, exc=None):
        """Writes the OOM forensics bundle for `exc`, a CUDA out-of-memory error you caught
        (None: the last OOM torch's observer saw), tells the agent and prints the path on
        stderr; returns the path, or None. Once per exception: gpumon's own hooks
        (`with mon.step():`, the excepthook) report it too, and a second report of the same
        exception returns the first path. Never raises."""
        if not self.active:
            return None
        try:
            return _oom.report(self, exc, _find_binary(), self._oom_folder())
        except Exception as e:
            _warn_once("oom", "no OOM forensics bundle: %r" % (e,))
            return None

    def oom_guard(self, model, min_micro_batch_size=1, **options):
        """An OOM guard for `model` (docs/oom-guard.md): `loss = guard.run(batch, forward)`
        runs forward(micro_batch) -> mean loss and its backward in micro-batches, splitting the
        same batch and retrying it on a CUDA out-of-memory error (down to min_micro_batch_size,
        where the OOM is raised), before one when memory is about to run out, and merging again
        when it returns. Works on an inactive monitor too (nothing is sent then). Call
        optimizer.zero_grad() before run(): a retry starts from no gradients.

        options: micro_batch_size (to start from; default the whole batch), backward (called
          with each weighted micro-batch loss instead of loss.backward(): Lightning's
          manual_backward, accelerate's backward), split (split(batch, size) -> micro-batches,
          for batches that are not tensors / tuples / lists / dicts of tensors), sample_count
          (sample_count(micro_batch) -> int, with split), memory_probe (a callable returning
          the readings of gpumon._oom_guard.CudaMemoryProbe; default that on CUDA, none on the
          CPU), probe_every (steps between probes, default 10), headroom_margin (the share of
          the device memory kept free, default 0.02), hysteresis_steps (at least this many steps
          from a change to a merge, default 300), predict (False: act on OOMs only),
          zero_grad (called on a retry, e.g. optimizer.zero_grad, for parameters outside
          `model`), weight (weight(micro_batch) -> its share's numerator, default the sample
          count: the label-token count for token-mean losses).
        """
        from gpumon._oom_guard import OomGuard
        return OomGuard(self, model, min_micro_batch_size, **options)

    def stats(self):
        """The client's counters (sent, dropped, connects, disconnects, ...); {} when inactive.
        Hands the steps queued in this process to the client first."""
        try:
            if not self.active:
                return {}
            self._flush_outbox()
            return dict(self._client.stats(), steps=self._step_number())
        except Exception:
            return {}

    def flush(self):
        """Writes the steps queued so far to the agent now (they go at most 1 s late
        otherwise). True when nothing is left queued."""
        if not self.active:
            return False
        try:
            self._flush_outbox()
            return self._client.flush()
        except Exception as e:
            self._fail(e)
            return False

    def findings(self):
        """The agent's live findings now: a list of dicts (id, severity, title, summary,
        confidence, gpus, ranks, pids (processes without a RANK), start_ms, end_ms), [] when
        none, no agent or inactive."""
        if not self.active:
            return []
        try:
            self._client.receive()
            self._load_findings()
            return [dict(f) for f in self._findings]
        except Exception as e:
            _warn_once("findings", "live findings unavailable: %r" % (e,))
            return []

    def health_score(self):
        """The agent's live health score (0-100), None before the agent sent one."""
        self.findings()
        return self._health_score if self.active else None

    def on_finding(self, callback):
        """Calls `callback(event)` for each finding that appears, changes or clears, where
        `event` is the finding's dict plus "state": "appeared", "changed" (the same finding,
        now on other GPUs / ranks) or "cleared". It runs in this thread, from
        the next gpumon call (a step, or findings()) after the agent's list changed; an exception
        in it becomes one GpumonWarning and training goes on."""
        if callable(callback):
            self._finding_callbacks.append(callback)
            if self._clock is not None:  # findings that came before it count as news for it
                self._clock.ask_housekeeping()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    # Internals: every one runs under a try in a public entry point or guards itself.

    def _epoch_start(self):
        if self._clock is None:
            return
        try:
            self._clock.begin_epoch()  # before the first batch: not a step
        except Exception as e:
            self._fail(e)

    def _add_data_wait(self, seconds):
        """Data wait a trainer callback measured (counts as this step's fetch)."""
        if self._clock is not None:
            self._clock.add_data_wait(seconds)

    def _step_number(self):
        """The number of the current step (the next one to be sent)."""
        return self._clock.steps() if self._clock is not None else 0

    def _housekeeping(self):
        """From within a step, when the clock's hand-over asks (at most every 1 s: the client
        lost the agent or has new findings, or it is not a _gpumon.Client): hands the queued
        steps to the client, warns of a lost agent, runs the finding callbacks and the memory
        capture (CUDA only) when the agent's findings changed, and closes the capture's history
        window when its steps are done."""
        self._flush_outbox()
        if self._torch is None and self._client is not None:
            self._resolve_device()
        if self._finding_callbacks or (self._capture is not None and
                                       self._device_index is not None):
            self._check_findings()
        if self._capture is not None and self._capture.window is not None:
            self._run_capture(self._capture.tick)
        if self._table is not None:
            self._tick_table(self._step_number())

    def _keep_housekeeping(self):
        """Makes the step calls run the housekeeping at every hand-over while something needs it:
        the table, a device not resolved yet, an open history window of the memory capture."""
        if self._clock is not None:
            self._clock.keep_housekeeping(
                self._table is not None or self._torch is None or (
                    self._capture is not None and self._capture.window is not None))

    def _table_hooks(self):
        """Makes the gpumon calls run the table: the step clock's housekeeping at every
        hand-over, or, with no step clock (no agent), _table_step() as step()."""
        on = self._table is not None
        if self._clock is not None:
            self._keep_housekeeping()
        elif on:
            self.step = self._table_step
        else:
            self.__dict__.pop("step", None)

    def _table_step(self):
        """step() of a Monitor without an agent while the table is on: counts the step."""
        self._table_steps += 1
        self._tick_table(self._table_steps)
        return _NULL

    def _tick_table(self, steps):
        """Prints the table when due; an error stops it with one warning, training goes on."""
        table = self._table
        if table is None:
            return
        try:
            table.tick(steps, self._torch if self._torch is not None else sys.modules.get("torch"))
        except Exception as e:
            _warn_once("table", "the table stopped after an error: %r" % (e,))
            self._table = None
            try:
                self._table_hooks()
            except Exception:
                pass

    def _on_error(self, exc):
        """An exception leaves a `with mon.step():` body: report it when it is (or wraps) a CUDA
        OOM. Only runs on exceptions, so it costs the steps nothing."""
        oom = _oom.find_oom(exc) if self.active else None
        if oom is not None:
            self.oom_report(oom)

    def _oom_folder(self):
        return self._oom_dir or os.environ.get("GPUMON_OOM_DIR") or os.getcwd()

    def _recent_steps(self):
        # The last one may be a step still waiting for its GPU time (null there).
        return [json.loads(line) for line in self._clock.recent()]

    def _send_error(self, exc_type, exc, tb):
        """Tells the agent the process is ending on an uncaught exception, after the steps
        queued before it (run_failed, docs/DIAGNOSES.md)."""
        self._send_now(_error_line(exc_type, exc, tb, self._step_number()))

    def _send_now(self, line):
        """Sends `line` (an OOM report, an error) at once, after the steps queued before it."""
        if self._client is not None:
            self._flush_outbox()  # the steps before it first
            self._client.send(line)
            self._client.flush()

    def _load_findings(self):
        seq = self._client.findings_seq()
        if seq == self._findings_seq:
            return
        self._findings_seq = seq
        line = self._client.findings_line()
        if line:
            message = json.loads(line)
            self._findings = message.get("findings") or []
            self._health_score = message.get("health_score")
        else:  # the agent went away
            self._findings, self._health_score = [], None
        self._run_finding_callbacks()
        self._capture_findings()

    def _set_capture(self, on, history_steps):
        """Switches the memory capture on (history_steps) or off; what it captured stays done."""
        old = self._capture
        self._capture = _memory_capture.MemoryCapture(history_steps) if on else None
        if old is not None and on:
            self._capture.done, self._capture.window = old.done, old.window
        elif old is not None:
            old.abort(self)
        self._keep_housekeeping()

    def _capture_findings(self):
        """The memory capture's look at findings that changed (or at those before CUDA)."""
        if self._capture is not None and self._findings:
            self._run_capture(self._capture.check, self._findings)

    def _run_capture(self, fn, *args):
        """Runs a step of the memory capture; an error switches it off with one warning (and
        its recording off), training goes on."""
        try:
            fn(self, *args)
        except Exception as e:
            _warn_once("memory-capture", "the memory capture stopped after an error: %r" % (e,))
            capture, self._capture = self._capture, None
            if capture is not None:
                capture.abort(self)
        try:
            self._keep_housekeeping()
        except Exception:
            pass

    def _run_finding_callbacks(self):
        if not self._finding_callbacks or self._callback_seq == self._findings_seq:
            return
        self._callback_seq = self._findings_seq
        # The identity of the agent's own change log (src/diagnose/finding_identity.h): a
        # finding another GPU or rank joins has changed; it has not cleared and appeared anew.
        from gpumon import _gpumon
        then, now = self._callback_findings, list(self._findings)
        appeared, cleared, changed = _gpumon.compare_findings(then, now)
        events = [dict(now[j], state="appeared") for j in appeared]
        events += [dict(now[j], state="changed") for j in changed]
        events += [dict(then[i], state="cleared") for i in cleared]
        self._callback_findings = now
        for event in events:
            for callback in list(self._finding_callbacks):
                try:
                    callback(event)
                except Exception as e:
                    _warn_once("finding-callback", "an on_finding callback raised %r" % (e,))

    def _check_findings(self):
        try:
            if self._client.findings_seq() != self._findings_seq:
                self._load_findings()
        except Exception as e:
            _warn_once("findings", "live findings unavailable: %r" % (e,))

    def _flush_outbox(self):
        """Hands the queued steps to the client, which writes them to the socket now."""
        client = self._client
        self._clock.hand_to(client)
        client.flush()
        disconnects = client.disconnects()
        if disconnects != self._disconnects:
            self._disconnects = disconnects
            _warn_once(
                "agent-lost",
                "lost the agent at %s (%s); training goes on, steps are queued (bounded) and "
                "sent if it comes back" % (self.socket_path, client.stats()["last_error"]),
            )

    def _fail(self, error):
        _warn_once("internal", "disabled after an internal error: %r" % (error,))
        self._switch_off()

    def _switch_off(self):
        """Inactive from now on: the step calls do nothing, nothing more is sent."""
        self._client = None
        if self._clock is not None:
            self._clock.switch_off()


def _find_binary():
    """GPUMON_BINARY (and only it, when set), else the executable of this install (pip install .),
    else gpumon on PATH, else this repository's build folder (python/gpumon -> build/gpumon);
    None when none."""
    from gpumon import _cli, _gpumon
    return _gpumon.find_gpumon_binary(_checkout_binary(), _cli.installed_binary() or "")


def _checkout_binary():
    """build/gpumon of the checkout this module is in (python/gpumon -> build/gpumon)."""
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return os.path.join(repo, "build", "gpumon")


def _hello(torch, _gpumon):
    device = index = version = None
    if torch is not None:
        version = str(getattr(torch, "__version__", ""))
        try:
            if torch.cuda.is_available():
                index = torch.cuda.current_device()
                device = "cuda:%d" % index
            else:
                device = "cpu"
        except Exception:
            device = None
    have_cuda = torch is not None and index is not None
    return _gpumon.hello_line(
        torch_version=version, device=device,
        pci_bus_id=_device.pci_bus_id(torch, index) if have_cuda else None,
        device_uuid=_device.uuid(torch, index) if have_cuda else None)


# The zero-code hooks' Monitor (_auto.py), and whether the script started its own: then the hooks
# stand back, so no step is counted twice.
_auto_monitor = None
_explicit_started = False


def _start_auto():
    """The Monitor of the zero-code hooks (_auto.py), with start()'s defaults."""
    global _auto_monitor
    try:
        _auto_monitor = _start(None, True, None, 1.0, None, 64, 1.0)
    except Exception as e:
        _warn_once("start", "disabled: %r" % (e,))
        _auto_monitor = Monitor()
    return _auto_monitor


def start(socket_path=None, start_agent=True, record=None, allocator_interval_s=1.0,
          oom_dir=None, oom_steps=64, gpu_interval_s=1.0, table_interval_s=None,
          capture_memory=True, capture_history_steps=20):
    """Attach to the node's agent and return a Monitor (a no-op one when there is none).

    socket_path: default GPUMON_AGENT_SOCKET (set by `gpumon record -- CMD`), else the agent's
      default socket ($XDG_RUNTIME_DIR/gpumon/agent.sock or /tmp/gpumon-UID/agent.sock).
    start_agent: when nothing listens there, start `gpumon agent` (GPUMON_BINARY, this install's,
      PATH or this repository's build/gpumon) in the background; it exits 30 s after its last
      client.
    record: a recording file for an agent started here (default GPUMON_RECORD; none: the agent
      only counts steps).
    allocator_interval_s: read torch.cuda.memory_stats() at most this often (CUDA only).
    oom_dir: where a CUDA OOM's forensics bundle goes (default GPUMON_OOM_DIR, else the
      current directory); oom_steps: how many of the last steps it holds.
    gpu_interval_s: time a step on the GPU (CUDA events) at most this often (CUDA only).
    table_interval_s: print the memory table every this many seconds (mon.log_table(); off
      when None). A bad value raises ValueError here.
    capture_memory: when the agent's live findings first name memory_leak or oom_forecast for
      this process, write torch.cuda.memory_summary() and the allocation history of the next
      capture_history_steps steps (0: none) next to the OOM bundles (docs/python.md, "Memory
      capture"). CUDA only. A bad capture_history_steps raises ValueError here.
    """
    if table_interval_s is not None:
        _table.check_interval(table_interval_s)  # bad configuration fails here, not later
    _memory_capture.check_history_steps(capture_history_steps)
    mon = _start_monitor(socket_path, start_agent, record, allocator_interval_s, oom_dir,
                         oom_steps, gpu_interval_s)
    mon._set_capture(capture_memory, capture_history_steps)
    if table_interval_s is not None:
        mon.log_table(table_interval_s)
    return mon


def _start_monitor(socket_path, start_agent, record, allocator_interval_s, oom_dir, oom_steps,
                   gpu_interval_s):
    global _explicit_started
    _explicit_started = True
    auto = sys.modules.get("gpumon._auto")
    if auto is not None:
        auto.stand_back()
    if _auto_monitor is not None and _auto_monitor.active:
        # The hooks' Monitor already talks to the agent: the script's calls count from now on,
        # on the same connection, and the hooks stand back.
        return _auto_monitor
    try:
        return _start(socket_path, start_agent, record, allocator_interval_s, oom_dir, oom_steps,
                      gpu_interval_s)
    except Exception as e:
        _warn_once("start", "disabled: %r" % (e,))
        return Monitor()


def _start(socket_path, start_agent, record, allocator_interval_s, oom_dir, oom_steps,
           gpu_interval_s):
    try:
        from gpumon import _gpumon
    except ImportError as e:
        _warn_once(
            "module",
            "the _gpumon extension is not built (cmake --build build --target gpumon_python): "
            "%s; gpumon does nothing" % e,
        )
        return Monitor()
    from gpumon import _cli
    path, warning_kind, warning = _gpumon.attach_agent(
        socket_path or "", bool(start_agent), record or "", _checkout_binary(),
        _cli.installed_binary() or "")
    if warning_kind:
        _warn_once(warning_kind, warning)
        return Monitor()
    torch = sys.modules.get("torch")
    client = _gpumon.Client(path)
    client.set_hello(_hello(torch, _gpumon))
    client.flush()  # connects now when the agent is there; else retried with backoff
    mon = Monitor(client, path, allocator_interval_s, torch, oom_dir, oom_steps, gpu_interval_s)
    if not client.stats()["connected"]:
        _warn_once(
            "connect",
            "cannot reach the agent at %s yet (%s); steps are queued and retried"
            % (path, client.stats()["last_error"]),
        )
    atexit.register(mon.close)
    _watch_uncaught(mon)
    return mon


_latest = None  # the Monitor the excepthook reports an uncaught OOM to
_previous_hook = None


def _excepthook(exc_type, exc, tb):
    try:
        mon = _latest
        oom = _oom.find_oom(exc)
        if mon is not None and oom is not None:
            mon.oom_report(oom)  # adds the path as a note before the traceback is printed
        if mon is not None and mon.active:  # KeyboardInterrupt too: a rank stopped (hang)
            mon._send_error(exc_type, exc, tb)
    except Exception:
        pass
    (_previous_hook or sys.__excepthook__)(exc_type, exc, tb)


def _error_line(exc_type, exc, tb, step):
    """The `error` message for an uncaught exception (docs/python.md "Protocol"): its type, its
    message (cut to 1000 characters: the line stays under the protocol's 4 KiB), where it was
    raised (the innermost frame) and the step in progress."""
    where = None
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is not None:
        code = tb.tb_frame.f_code
        where = "%s:%d in %s" % (os.path.basename(code.co_filename), tb.tb_lineno, code.co_name)
    message = str(exc)
    if len(message) > 1000:
        message = message[:1000] + "..."
    return json.dumps({"type": "error", "exception": exc_type.__name__, "message": message,
                       "where": where, "step": step}, ensure_ascii=True)


def _watch_uncaught(mon):
    """Chains _excepthook in front of the current sys.excepthook, once per process."""
    global _latest, _previous_hook
    _latest = mon
    if _previous_hook is None and sys.excepthook is not _excepthook:
        _previous_hook = sys.excepthook
        sys.excepthook = _excepthook
