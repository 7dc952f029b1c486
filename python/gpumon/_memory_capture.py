# SPDX-License-Identifier: MIT
"""The allocator's state when a memory finding appears (docs/python.md, "Memory capture"): when
the agent's live findings first name `memory_leak` or `oom_forecast` for this process, writes
torch.cuda.memory_summary() at once, records the allocations of the next steps into a snapshot
that https://pytorch.org/memory_viz opens, and announces each file with a `memory_captured`
action.

Contract:
- Runs only where the Monitor already looks at findings (its findings path, which parses the
  agent's list only when it changed) and, while a history window is open, from its housekeeping
  at each hand-over (about once a second): a step pays nothing otherwise.
- Once per finding id for the life of the process. Files are created 0600 under new names
  (never over another file) in the OOM bundle's folder, created 0700 when missing.
- History recording (torch >= 2.1) is on only for the window, Python stacks only, at most
  HISTORY_MAX_ENTRIES events; a recording the user had on is neither reset nor turned off.
- What fails raises to the Monitor, which turns it into one GpumonWarning and calls abort().
Not thread-safe: the training thread calls it. torch is the one the Monitor holds.
"""

import os

from gpumon._actions import action_line

FINDINGS = ("memory_leak", "oom_forecast")
HISTORY_MAX_ENTRIES = 100000  # alloc/free events the window keeps at most (a ring)


def concerns(finding, pid, rank, nvml_gpu):
    """Whether a live finding (the dict the agent sent) is about this process: its pid or rank is
    named. One that names neither (oom_forecast from NVML's memory used names GPUs only) counts
    when it is about a GPU of the run (not scope "machine") and names nvml_gpu, this process's
    GPU by NVML's index (None: not known, see nvml_gpu())."""
    pids, ranks = finding.get("pids") or [], finding.get("ranks") or []
    if pid in pids or (rank is not None and rank in ranks):
        return True
    if pids or ranks or finding.get("scope") == "machine":
        return False
    return nvml_gpu is not None and nvml_gpu in (finding.get("gpus") or [])


def nvml_gpu(torch):
    """This process's GPU as NVML numbers it, where that needs no rank -> GPU mapping (the
    agent's, src/training/rank_device.h): CUDA sees one GPU and CUDA_VISIBLE_DEVICES is unset,
    so NVML sees that one too, as 0. Else None."""
    if os.environ.get("CUDA_VISIBLE_DEVICES") is not None:
        return None
    return 0 if torch.cuda.device_count() == 1 else None


def has_history(torch):
    """torch >= 2.1's allocation history: _record_memory_history(max_entries=...), _snapshot()
    and _dump_snapshot()."""
    memory = getattr(torch.cuda, "memory", None)
    return all(hasattr(memory, name)
               for name in ("_record_memory_history", "_snapshot", "_dump_snapshot"))


def check_history_steps(steps):
    """ValueError unless steps is an integer >= 0."""
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 0:
        raise ValueError("capture_history_steps must be an integer >= 0, not %r" % (steps,))


def _user_recording(torch, device):
    """Whether history is already being recorded (by the user): the allocator holds trace
    events for the device."""
    traces = torch.cuda.memory._snapshot().get("device_traces") or []
    return device < len(traces) and bool(traces[device])


def _create(base, extensions):
    """One new file per extension, 0600, named base + extension (base-1..., when one of them
    exists), never over another file; returns their paths, the files closed and empty."""
    for n in range(100):
        stem = base if n == 0 else "%s-%d" % (base, n)
        made = []
        try:
            for ext in extensions:
                path = stem + ext
                os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC,
                                 0o600))
                made.append(path)
            return made
        except BaseException as e:
            for path in made:
                os.unlink(path)
            if not isinstance(e, FileExistsError):
                raise
    raise FileExistsError(base + "*: 100 captures under this name")


class MemoryCapture:
    """One per Monitor. history_steps: the steps the allocation history covers (at least; the
    window closes at the first hand-over after them); 0: the summary only."""

    def __init__(self, history_steps=20, max_entries=HISTORY_MAX_ENTRIES):
        check_history_steps(history_steps)
        self.history_steps = history_steps
        self.max_entries = max_entries
        self.done = set()  # the finding ids captured (or tried) in this process
        # The open history window: start step, pickle path, whether we turned recording on, and
        # the (finding, summary path) pairs waiting for it.
        self.window = None

    def check(self, mon, findings):
        """Captures for each finding of FINDINGS about this process not captured before."""
        torch, device = mon._torch, mon._device_index
        if device is None:  # no CUDA (yet): nothing to capture
            return
        pid, gpu = os.getpid(), None
        for finding in findings:
            fid = finding.get("id")
            if fid not in FINDINGS or fid in self.done:
                continue
            if not (finding.get("pids") or finding.get("ranks")) and gpu is None:
                gpu = nvml_gpu(torch)
            if concerns(finding, pid, mon._rank, gpu):
                self.done.add(fid)  # once, whatever happens below
                self._capture(mon, torch, device, fid)

    def _capture(self, mon, torch, device, fid):
        step = mon._step_number()
        text = torch.cuda.memory_summary(device)
        folder = os.path.abspath(mon._oom_folder())
        if not os.path.isdir(folder):
            os.makedirs(folder, mode=0o700, exist_ok=True)
        base = os.path.join(folder, "gpumon-memory-%d-step%d-%s" % (os.getpid(), step, fid))
        start = self.window is None and self.history_steps > 0 and has_history(torch)
        paths = _create(base, (".txt", ".pickle") if start else (".txt",))
        try:
            with open(paths[0], "w", encoding="utf-8") as f:
                f.write(text)
            if start:
                ours = not _user_recording(torch, device)
                self.window = {"start": step, "path": paths[1], "ours": ours, "findings": []}
                if ours:
                    torch.cuda.memory._record_memory_history(max_entries=self.max_entries,
                                                             stacks="python")
        except BaseException:
            # Nothing half-made stays behind: the files this capture created (a window that
            # opened is abort()'s to close).
            if self.window is None or self.window["path"] != paths[-1]:
                for path in paths:
                    try:
                        os.unlink(path)
                    except OSError:
                        pass
            raise
        window = self.window
        if window is None:
            why = ("history off" if self.history_steps == 0 else
                   "no allocation history before torch 2.1")
            _send(mon, step, "allocator state captured for %s: %s (%s)" % (fid, paths[0], why),
                  fid, paths[0], None)
            return
        window["findings"].append((fid, paths[0]))
        _send(mon, step, "allocator state captured for %s: %s; recording the next %d steps' "
              "allocations into %s" % (fid, paths[0], self.history_steps, window["path"]),
              fid, paths[0], window["path"], history_pending=True,
              history_steps=self.history_steps)

    def tick(self, mon):
        """From the housekeeping while a window is open: closes it once history_steps passed."""
        w = self.window
        if w is not None and mon._step_number() - w["start"] >= self.history_steps:
            self.finish(mon)

    def finish(self, mon):
        """Closes the open window now (also at close()): dumps the snapshot, turns the recording
        off when it was ours, and sends the second `memory_captured` of each finding."""
        w = self.window
        if w is None:
            return
        memory = mon._torch.cuda.memory
        memory._dump_snapshot(w["path"])  # into our 0600 file: its "wb" keeps the mode
        w["dumped"] = True
        if w["ours"]:
            memory._record_memory_history(enabled=None)
        self.window = None
        _announce(mon, w)

    def abort(self, mon):
        """After an error: turns off the recording it turned on, removes a snapshot not written
        and says what there is for the findings that waited for it. Raises nothing."""
        w, self.window = self.window, None
        if w is None:
            return
        if w["ours"]:
            try:
                mon._torch.cuda.memory._record_memory_history(enabled=None)
            except Exception:
                pass
        if not w.get("dumped"):
            try:
                os.unlink(w["path"])
            except OSError:
                pass
        try:
            _announce(mon, w)
        except Exception:
            pass


def _announce(mon, w):
    """The second `memory_captured` of each finding of window w: with its snapshot, or, when
    that was not written, without."""
    step = mon._step_number()
    for fid, summary in w["findings"]:
        if w.get("dumped"):
            _send(mon, step, "allocator state captured for %s: %s, history %s"
                  % (fid, summary, w["path"]), fid, summary, w["path"],
                  history_steps=step - w["start"])
        else:
            _send(mon, step, "allocator state captured for %s: %s (the allocation history "
                  "failed)" % (fid, summary), fid, summary, None)


def _send(mon, step, summary, fid, summary_file, snapshot_file, **fields):
    """The `memory_captured` action (docs/python.md "Protocol") through the Monitor, at once."""
    mon._send_now(action_line("memory_captured", step, summary, finding=fid,
                              summary_file=summary_file, snapshot_file=snapshot_file, **fields))
