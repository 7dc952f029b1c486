# SPDX-License-Identifier: MIT
"""The Python facade over _gpumon.Client: step timing, data-loader wait, allocator stats.

Contract (docs/python.md):
- No public call raises into the training loop. An error inside gpumon becomes one
  GpumonWarning and the monitor becomes a no-op; errors of the user's own loader pass through.
- Nothing here blocks on the agent: _gpumon.Client.send() queues and writes without waiting.
- In a forked child (a DataLoader worker) every call does nothing (a fork generation bumped by
  os.register_at_fork, checked instead of getpid() every step; the C++ client does the same).
- No thread and no signal handler is started in the training process (a sys.excepthook is
  chained, for the OOM forensics of _oom.py). torch is never imported by gpumon; it is used only
  when the training script has imported it.
"""

import atexit
import collections
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import warnings

from gpumon import _device, _oom

_perf = time.perf_counter
_wall = time.time


class GpumonWarning(UserWarning):
    """The only thing gpumon ever raises, as a warning, once per kind of problem."""


_warned = set()

# Bumped in every forked child (a DataLoader worker): a Monitor compares it with the value it
# was made with instead of calling os.getpid() every step (a system call: microseconds on a VM).
_fork_generation = [0]


def _bump_fork_generation():
    _fork_generation[0] += 1


os.register_at_fork(after_in_child=_bump_fork_generation)


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


class _StepContext:
    """What mon.step() returns: a plain call marks a step boundary, `with` times its body."""

    __slots__ = ("_mon",)

    def __init__(self, mon):
        self._mon = mon

    def __enter__(self):
        self._mon._enter_with()
        return None

    def __exit__(self, exc_type, exc, tb):
        if exc is not None:
            self._mon._on_error(exc)
        self._mon._exit_with()
        return False


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
        while True:
            mon._before_fetch()
            t0 = _perf()
            try:
                batch = next(it)
            except StopIteration:
                return
            mon._data_wait += _perf() - t0
            mon._fetched = True
            yield batch


class _CudaTimer:
    """GPU time of a step from CUDA events, read on a later step with query() (no sync).

    Events come from a small ring and are re-recorded, never created per step (creating one
    costs more than recording it), and a step's end event is the next step's start, so a plain
    mon.step() records one event. A ring slot is reused only after the step that used it was
    read, which happens one step later: at most 3 events are in use at a time.
    """

    RING = 8

    def __init__(self, torch):
        self._ring = [torch.cuda.Event(enable_timing=True) for _ in range(self.RING)]
        self._next = 0

    def begin(self):
        ev = self._ring[self._next]
        self._next = (self._next + 1) % self.RING
        ev.record()
        return ev

    def end(self, begun):
        return (begun, self.begin())

    def seconds(self, token):
        """The elapsed seconds once the GPU has passed the end event, else None."""
        begun, ended = token
        if not ended.query():
            return None
        return begun.elapsed_time(ended) / 1000.0


_MEM_KEYS = (
    ("allocated", "allocated_bytes.all.current"),
    ("reserved", "reserved_bytes.all.current"),
    ("active", "active_bytes.all.current"),
    ("inactive_split", "inactive_split_bytes.all.current"),
    ("allocated_peak", "allocated_bytes.all.peak"),
    ("reserved_peak", "reserved_bytes.all.peak"),
    ("num_alloc_retries", "num_alloc_retries"),
    ("num_ooms", "num_ooms"),
)


_OUTBOX_INTERVAL = 0.2  # seconds between hand-overs of queued steps to the client


class Monitor:
    """Sends this process's steps to the agent. Get one with gpumon.start().

    A Monitor whose `active` is False does nothing (no agent, or disabled after an error).
    """

    # GPU step time is measured on at most one step every gpu_interval_s seconds (the others
    # carry gpu_step_s = null): recording and reading CUDA events costs tens of microseconds of
    # CPU a step on a slow host, too much for a 10 ms step (docs/PERFORMANCE.md).
    _gpu_next = 0.0

    def __init__(self, client=None, socket_path=None, allocator_interval_s=1.0, torch=None,
                 oom_dir=None, oom_steps=64, gpu_interval_s=0.1):
        self._gpu_interval = gpu_interval_s
        self._client = client
        self.socket_path = socket_path
        self._pid = os.getpid()
        self._generation = _fork_generation[0]
        self._outbox = []  # step messages not yet handed to the client
        self._outbox_due = 0.0
        self._ctx = _StepContext(self)
        self._step = 0
        self._t0 = _perf()
        self._t0_wall = _wall()
        self._data_wait = 0.0
        self._fetched = False
        self._pending = None  # (perf, wall) of a plain step() not yet sent
        self._with_start = None
        self._gpu_timer = None
        self._gpu_begun = None
        self._gpu_waiting = None  # (message, token): the previous step, waiting for its GPU time
        self._mem_fn = None
        self._mem_interval = allocator_interval_s
        self._mem_next = 0.0
        self._disconnects = 0
        self._closed = False
        # The agent's live findings (docs/DIAGNOSES.md "Live"): parsed only when they changed.
        self._findings_seq = 0
        self._findings_check_at = 0.0  # perf time of the next look for new findings (callbacks)
        self._findings = []
        self._health_score = None
        self._finding_callbacks = []
        self._callback_seq = 0
        self._callback_keys = {}
        # For the OOM bundle: the last step messages sent (appending is the only per-step cost).
        self._ring = collections.deque(maxlen=max(int(oom_steps), 1))
        self._oom_dir = oom_dir
        self._torch = torch
        self._device_index = None
        self._device = None
        self._rank = _env_int("RANK")
        self._local_rank = _env_int("LOCAL_RANK")
        self._world_size = _env_int("WORLD_SIZE")
        if client is not None and torch is not None:
            try:
                if torch.cuda.is_available():
                    self._gpu_timer = _CudaTimer(torch)
                    device = torch.cuda.current_device()
                    self._device_index, self._device = device, "cuda:%d" % device
                    self._mem_fn = lambda: torch.cuda.memory_stats(device)
            except Exception as e:  # a broken CUDA setup: steps without GPU time
                _warn_once("cuda", "no GPU step time or allocator stats: %s" % e)
            if self._device_index is not None:
                try:
                    _oom.attach_observer(torch)
                except Exception as e:
                    _warn_once("oom-observer", "torch's OOM observer not attached: %r" % (e,))
        self._gpu_maybe_begin(_perf())

    @property
    def active(self):
        return self._client is not None and _fork_generation[0] == self._generation

    def wrap(self, iterable):
        """Iterate `iterable` (a DataLoader), timing the wait for each batch."""
        if not self.active:
            return iterable
        return _Wrapped(self, iterable)

    def step(self):
        """Marks the end of a step (plain call) or, as `with mon.step():`, times its body."""
        if not self.active:
            return _NULL
        try:
            self._apply_pending()
            self._pending = (_perf(), _wall())
        except Exception as e:
            self._fail(e)
        return self._ctx

    def close(self):
        """Sends what is left and a bye, and disconnects (also run at exit). Idempotent."""
        if self._closed or not self.active:
            return
        self._closed = True
        try:
            self._apply_pending()
            self._send_waiting()
            self._flush_outbox()
            self._client.send('{"type":"bye"}')
            self._client.close(1.0)
        except Exception as e:
            self._fail(e)
        self._client = None

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

    def stats(self):
        """The client's counters (sent, dropped, connects, disconnects, ...); {} when inactive.
        Hands the steps queued in this process to the client first."""
        try:
            if not self.active:
                return {}
            self._flush_outbox()
            return dict(self._client.stats(), steps=self._step)
        except Exception:
            return {}

    def flush(self):
        """Writes the steps queued so far to the agent now (they go at most 0.2 s late
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
        """Calls `callback(event)` for each finding that appears or clears, where `event` is
        the finding's dict plus "state": "appeared" or "cleared". It runs in this thread, from
        the next gpumon call (a step, or findings()) after the agent's list changed; an exception
        in it becomes one GpumonWarning and training goes on."""
        if callable(callback):
            self._finding_callbacks.append(callback)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    # Internals: every one runs under a try in a public entry point or guards itself.

    def _epoch_start(self):
        try:
            self._apply_pending()
            if not self._fetched and self._with_start is None:
                self._t0, self._t0_wall = _perf(), _wall()  # before the first batch: not a step
                self._data_wait = 0.0
                self._gpu_restart(self._t0)
        except Exception as e:
            self._fail(e)

    def _before_fetch(self):
        if self._pending is not None:
            try:
                self._apply_pending()
            except Exception as e:
                self._fail(e)

    def _enter_with(self):
        if not self.active:
            return
        try:
            self._pending = None  # step() just before this was the start, not a boundary
            self._with_start = (_perf(), _wall())
            self._gpu_restart(self._with_start[0])  # the body only, like the CPU time
        except Exception as e:
            self._fail(e)

    def _exit_with(self):
        if not self.active or self._with_start is None:
            return
        try:
            start, start_wall = self._with_start
            self._with_start = None
            self._emit(start, start_wall, _perf(), _wall())
        except Exception as e:
            self._fail(e)

    def _apply_pending(self):
        if self._pending is not None:
            end, end_wall = self._pending
            self._pending = None
            self._emit(self._t0, self._t0_wall, end, end_wall)

    def _emit(self, start, start_wall, end, end_wall):
        # The step message by hand (about 3x cheaper than json.dumps): repr() of a float is the
        # shortest text that reads back to the same double, so the agent stores it exactly.
        mem = self._read_mem(end)
        head = '{"type":"step","step":%d,"t_start":%r,"t_end":%r,"cpu_step_s":%r,"gpu_step_s":' % (
            self._step, start_wall, start_wall + (end - start), end - start)
        tail = ',"data_wait_s":%r,"mem":%s}' % (
            self._data_wait, "null" if mem is None else json.dumps(mem, separators=(",", ":")))
        self._step += 1
        if self._finding_callbacks and end >= self._findings_check_at:
            # At most every 0.1 s, like the client's reads: a step pays a float comparison.
            self._findings_check_at = end + 0.1
            self._check_findings()
        self._t0, self._t0_wall = end, end_wall
        self._data_wait = 0.0
        self._fetched = False
        timer = self._gpu_timer
        if timer is None:
            self._send(head + "null" + tail)
            return
        self._send_waiting()  # the previous timed step first: steps go out in order
        begun, self._gpu_begun = self._gpu_begun, None
        if begun is None:  # this step was not timed
            self._send(head + "null" + tail)
            self._gpu_maybe_begin(end)
            return
        token = timer.end(begun)
        self._gpu_waiting = (head, tail, token)
        if end >= self._gpu_next:  # this step's end event also starts the next timed step
            self._gpu_next = end + self._gpu_interval
            self._gpu_begun = token[1]

    def _gpu_maybe_begin(self, now):
        """Starts timing the step that begins now on the GPU, when one is due."""
        if self._gpu_timer is not None and now >= self._gpu_next:
            self._gpu_next = now + self._gpu_interval
            self._gpu_begun = self._gpu_timer.begin()

    def _gpu_restart(self, now):
        """The step really starts now (first batch, `with` body): a timed step restarts its
        start event here rather than counting the time before it."""
        if self._gpu_timer is None:
            return
        if self._gpu_begun is not None:
            self._gpu_begun = self._gpu_timer.begin()
        else:
            self._gpu_maybe_begin(now)

    def _send_waiting(self):
        if self._gpu_waiting is None:
            return
        head, tail, token = self._gpu_waiting
        self._gpu_waiting = None
        seconds = self._gpu_timer.seconds(token)  # None when not done yet: no sync
        self._send(head + ("null" if seconds is None else repr(float(seconds))) + tail)

    def _read_mem(self, now):
        if self._mem_fn is None or now < self._mem_next:
            return None
        self._mem_next = now + self._mem_interval
        stats = self._mem_fn()
        return {name: stats.get(key) for name, key in _MEM_KEYS}

    def _on_error(self, exc):
        """An exception leaves a `with mon.step():` body: report it when it is (or wraps) a CUDA
        OOM. Only runs on exceptions, so it costs the steps nothing."""
        oom = _oom.find_oom(exc) if self.active else None
        if oom is not None:
            self.oom_report(oom)

    def _oom_folder(self):
        return self._oom_dir or os.environ.get("GPUMON_OOM_DIR") or os.getcwd()

    def _recent_steps(self):
        lines = list(self._ring)
        if self._gpu_waiting is not None:  # the last step, still waiting for its GPU time
            lines.append(self._gpu_waiting[0] + "null" + self._gpu_waiting[1])
        return [json.loads(line) for line in lines]

    def _send_oom(self, line):
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

    def _run_finding_callbacks(self):
        if not self._finding_callbacks or self._callback_seq == self._findings_seq:
            return
        self._callback_seq = self._findings_seq
        now = {}
        for f in self._findings:
            now[(f.get("id"), tuple(f.get("gpus") or ()), tuple(f.get("ranks") or ()))] = f
        events = [dict(f, state="appeared") for k, f in now.items() if k not in self._callback_keys]
        events += [dict(f, state="cleared") for k, f in self._callback_keys.items() if k not in now]
        self._callback_keys = now
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

    def _send(self, line):
        # Queued here and handed to the client at most every _OUTBOX_INTERVAL seconds: a call
        # into the extension costs ~5 us of a step after a context switch, a list append ~0.
        self._ring.append(line)
        self._outbox.append(line)
        now = _perf()
        if now >= self._outbox_due:
            self._outbox_due = now + _OUTBOX_INTERVAL
            self._flush_outbox()

    def _flush_outbox(self):
        """Hands the queued steps to the client, which writes them to the socket now."""
        client = self._client
        lines, self._outbox = self._outbox, []
        for line in lines:
            client.send(line)
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
        self._client = None


def _find_binary():
    """GPUMON_BINARY (and only it, when set), else gpumon on PATH, else this repository's
    build folder (python/gpumon -> build/gpumon)."""
    forced = os.environ.get("GPUMON_BINARY")
    if forced is not None:
        return forced if os.path.isfile(forced) and os.access(forced, os.X_OK) else None
    found = shutil.which("gpumon")
    if found:
        return found
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    candidate = os.path.join(repo, "build", "gpumon")
    return candidate if os.access(candidate, os.X_OK) else None


def _listening(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.settimeout(1.0)
        s.connect(path)
        return True
    except OSError:
        return False
    finally:
        s.close()


def _start_agent(binary, path, record):
    """Starts `gpumon agent` in its own session (it outlives this process until idle).

    A shell starts it in the background and exits at once, so the agent is not our child: it
    does not linger as a zombie when it exits before us, and Python never warns about a
    running subprocess."""
    idle = os.environ.get("GPUMON_AGENT_IDLE_EXIT_S", "30")
    cmd = [binary, "agent", "--socket", path, "--exit-when-idle", idle]
    if record:
        cmd += ["-o", record]
    log = os.environ.get("GPUMON_AGENT_LOG")  # where its messages go; default nowhere
    with open(log or os.devnull, "ab") as err:
        shell = subprocess.Popen(
            ["/bin/sh", "-c", '"$@" &', "sh"] + cmd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
            start_new_session=True,
            close_fds=True,
        )
        shell.wait(timeout=5.0)
    deadline = _perf() + 5.0
    while _perf() < deadline:
        if os.path.exists(path) and _listening(path):
            return True
        time.sleep(0.02)
    return False


def _start_agent_once(binary, path, record):
    """Eight ranks starting at once start one agent: the first to take the lock starts it,
    the others wait for the lock and find it listening."""
    import fcntl
    folder = os.path.dirname(path) or "."
    os.makedirs(folder, mode=0o700, exist_ok=True)
    with open(os.path.join(folder, ".agent-start.lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if _listening(path):
            return True
        return _start_agent(binary, path, record)


def _hello(torch):
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
    return json.dumps(
        dict({
            "type": "hello",
            "v": 1,
            "pid": os.getpid(),
            "rank": _env_int("RANK"),
            "local_rank": _env_int("LOCAL_RANK"),
            "world_size": _env_int("WORLD_SIZE"),
            "hostname": socket.gethostname(),
            "torch_version": version,
            "device": device,
        }, **_device.identity(torch, index)),
        separators=(",", ":"),
    )


def start(socket_path=None, start_agent=True, record=None, allocator_interval_s=1.0,
          oom_dir=None, oom_steps=64, gpu_interval_s=0.1):
    """Attach to the node's agent and return a Monitor (a no-op one when there is none).

    socket_path: default GPUMON_AGENT_SOCKET (set by `gpumon record -- CMD`), else the agent's
      default socket ($XDG_RUNTIME_DIR/gpumon/agent.sock or /tmp/gpumon-UID/agent.sock).
    start_agent: when nothing listens there, start `gpumon agent` (GPUMON_BINARY, PATH or this
      repository's build/gpumon) in the background; it exits 30 s after its last client.
    record: a recording file for an agent started here (default GPUMON_RECORD; none: the agent
      only counts steps).
    allocator_interval_s: read torch.cuda.memory_stats() at most this often (CUDA only).
    oom_dir: where a CUDA OOM's forensics bundle goes (default GPUMON_OOM_DIR, else the
      current directory); oom_steps: how many of the last steps it holds.
    gpu_interval_s: time a step on the GPU (CUDA events) at most this often (CUDA only).
    """
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
    from_env = os.environ.get("GPUMON_AGENT_SOCKET")
    path = socket_path or from_env or _gpumon.default_socket_path()
    if not socket_path and not from_env and not _listening(path):
        binary = _find_binary() if start_agent else None
        if binary is None:
            _warn_once(
                "no-agent",
                "no agent listens on %s and no gpumon binary was found (set GPUMON_BINARY or "
                "PATH, or run `gpumon agent`); gpumon does nothing" % path,
            )
            return Monitor()
        if not _start_agent_once(binary, path, record or os.environ.get("GPUMON_RECORD")):
            _warn_once("agent-start", "%s agent did not start on %s; gpumon does nothing"
                       % (binary, path))
            return Monitor()
    torch = sys.modules.get("torch")
    client = _gpumon.Client(path)
    client.set_hello(_hello(torch))
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
    except Exception:
        pass
    (_previous_hook or sys.__excepthook__)(exc_type, exc, tb)


def _watch_uncaught(mon):
    """Chains _excepthook in front of the current sys.excepthook, once per process."""
    global _latest, _previous_hook
    _latest = mon
    if _previous_hook is None and sys.excepthook is not _excepthook:
        _previous_hook = sys.excepthook
        sys.excepthook = _excepthook
