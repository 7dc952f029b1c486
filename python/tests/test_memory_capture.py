# SPDX-License-Identifier: MIT
"""The memory capture (docs/python.md "Memory capture"): when the agent's live findings first
name memory_leak or oom_forecast for this process, torch.cuda.memory_summary() is written at once
and the allocation history of the next K steps after it, each announced by a `memory_captured`
action. A stand-in torch.cuda records the allocator calls, a stand-in client carries the findings
the test pushes and keeps what is sent: no GPU, no sleeps. The CPU case runs on the real torch
where it is installed.

Environment: PYTHONPATH=<repo>/python (the _gpumon extension built).
"""
import os
import pickle
import stat
import sys
import types
import warnings

import pytest

import gpumon
from gpumon import _monitor
from gpumon._monitor import Monitor
from fake_client import FakeClient, FakeEvent  # noqa: E402

PID = os.getpid()


class FakeMemory:
    """torch.cuda.memory's history calls (torch >= 2.1), recorded."""

    def __init__(self, recording=False):
        self.calls = []
        self.recording = recording
        self.dump_error = None

    def _record_memory_history(self, enabled="all", context="all", stacks="all",
                               max_entries=sys.maxsize, device=None):
        self.calls.append(("record", enabled, stacks, max_entries))
        self.recording = enabled is not None

    def _snapshot(self, device=None):
        return {"segments": [], "device_traces": [[{"action": "alloc"}] if self.recording
                                                  else []]}

    def _dump_snapshot(self, filename="dump_snapshot.pickle"):
        self.calls.append(("dump", filename))
        if self.dump_error is not None:
            raise self.dump_error
        with open(filename, "wb") as f:  # as torch does
            pickle.dump(self._snapshot(), f)


class FakeCuda:
    """torch.cuda as the Monitor and the capture use it: one GPU, cuda:0."""

    def __init__(self, memory=None, devices=1):
        self.memory = memory if memory is not None else FakeMemory()
        self.devices = devices
        self.summaries = []
        self.summary_error = None

    Event = FakeEvent  # the step clock's GPU timer

    def is_available(self):
        return True

    def is_initialized(self):
        return True

    def current_device(self):
        return 0

    def device_count(self):
        return self.devices

    def memory_stats(self, device):
        return {"allocated_bytes.all.current": 1, "reserved_bytes.all.current": 2}

    def memory_summary(self, device=None, abbreviated=False):
        if self.summary_error is not None:
            raise self.summary_error
        self.summaries.append(device)
        return "|  PyTorch CUDA memory summary, device ID %d  |\n" % device

    def synchronize(self):
        raise AssertionError("gpumon must never synchronize")


def fake_torch(cuda=None):
    return types.SimpleNamespace(cuda=cuda or FakeCuda(), __version__="9.9")


def leak(**where):
    finding = {"id": "memory_leak", "severity": "warning", "summary": "allocated grows",
               "gpus": [0], "ranks": [], "pids": [PID], "scope": "run"}
    finding.update(where)
    return finding


@pytest.fixture(autouse=True)
def quiet(monkeypatch):
    """No hand-over by the clock's 1 s schedule (the tests run the housekeeping themselves), no
    RANK, and this process's warnings heard again."""
    monkeypatch.setattr(_monitor, "_HOUSEKEEPING_INTERVAL", 3600.0)
    for name in ("RANK", "CUDA_VISIBLE_DEVICES"):
        monkeypatch.delenv(name, raising=False)
    _monitor._warned.discard("memory-capture")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield caught


def ours(caught):
    return [str(w.message) for w in caught if issubclass(w.category, gpumon.GpumonWarning)]


def monitor(tmp_path, torch=None, **options):
    client = FakeClient()
    mon = Monitor(client, "fake.sock", torch=torch or fake_torch(),
                  oom_dir=str(tmp_path / "captures"), **options)
    return mon, client


def steps(mon, n):
    for _ in range(n):
        mon.step()
        mon._housekeeping()  # what a due hand-over runs


def mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def test_a_leak_writes_the_summary_at_once_then_the_next_k_steps_history(tmp_path, quiet):
    torch = fake_torch()
    memory = torch.cuda.memory
    mon, client = monitor(tmp_path, torch, capture_history_steps=5)
    steps(mon, 3)
    client.push(leak())
    steps(mon, 1)  # the step whose hand-over brings the finding
    folder = tmp_path / "captures"
    base = str(folder / ("gpumon-memory-%d-step4-memory_leak" % PID))
    summary, snapshot = base + ".txt", base + ".pickle"
    assert mode(folder) == 0o700 and mode(summary) == 0o600 and mode(snapshot) == 0o600
    assert open(summary).read() == "|  PyTorch CUDA memory summary, device ID 0  |\n"
    assert torch.cuda.summaries == [0]
    assert memory.calls == [("record", "all", "python", 100000)]
    first, = client.actions()
    assert first == {
        "type": "action", "action": "memory_captured", "step": 4,
        "summary": "allocator state captured for memory_leak: %s; recording the next 5 steps' "
                   "allocations into %s" % (summary, snapshot),
        "finding": "memory_leak", "summary_file": summary, "snapshot_file": snapshot,
        "history_pending": True, "history_steps": 5}
    steps(mon, 4)
    assert memory.calls == [("record", "all", "python", 100000)], "the window is 5 steps"
    steps(mon, 1)
    assert memory.calls[1:] == [("dump", snapshot), ("record", None, "all", sys.maxsize)]
    assert pickle.load(open(snapshot, "rb"))["device_traces"] == [[{"action": "alloc"}]]
    assert mode(snapshot) == 0o600
    second = client.actions()[1]
    assert second == {
        "type": "action", "action": "memory_captured", "step": 9,
        "summary": "allocator state captured for memory_leak: %s, history %s"
                   % (summary, snapshot),
        "finding": "memory_leak", "summary_file": summary, "snapshot_file": snapshot,
        "history_steps": 5}
    steps(mon, 30)
    assert len(memory.calls) == 3 and len(client.actions()) == 2
    assert sorted(os.listdir(folder)) == sorted(os.path.basename(p) for p in (summary, snapshot))
    assert ours(quiet) == []
    mon.close()


def test_once_per_finding_id_and_a_second_finding_shares_the_open_window(tmp_path, quiet):
    torch = fake_torch()
    mon, client = monitor(tmp_path, torch, capture_history_steps=3)
    forecast = dict(leak(), id="oom_forecast")
    client.push(leak(), forecast)  # both at once, as a near-full leak gives
    mon.findings()
    assert torch.cuda.summaries == [0, 0]
    leak_first, forecast_first = client.actions()
    assert leak_first["snapshot_file"] == forecast_first["snapshot_file"]
    assert forecast_first["summary_file"].endswith("-step0-oom_forecast.txt")
    steps(mon, 3)
    dumps = [c for c in torch.cuda.memory.calls if c[0] == "dump"]
    assert len(dumps) == 1
    assert [(a["finding"], a.get("history_pending")) for a in client.actions()[2:]] == [
        ("memory_leak", None), ("oom_forecast", None)]
    # The same ids again: changed, cleared and back, later: nothing more.
    client.push(leak(gpus=[0, 1]))
    steps(mon, 1)
    client.push()
    steps(mon, 1)
    client.push(leak(), forecast)
    steps(mon, 10)
    assert torch.cuda.summaries == [0, 0] and len(client.actions()) == 4
    assert len(os.listdir(tmp_path / "captures")) == 3
    mon.close()


def test_only_findings_about_this_process_count(tmp_path, monkeypatch):
    torch = fake_torch(FakeCuda(devices=2))
    mon, client = monitor(tmp_path, torch)
    client.push(leak(pids=[PID + 1]),  # another process
                dict(leak(pids=[], ranks=[3]), id="oom_forecast"))  # another rank
    mon.findings()
    # Naming only GPUs (oom_forecast from NVML's memory used) on a machine of several GPUs:
    # which one is ours is the agent's mapping, not guessed here.
    client.push(dict(leak(pids=[]), id="oom_forecast"))
    mon.findings()
    assert torch.cuda.summaries == [] and client.actions() == []
    # Our rank is named.
    monkeypatch.setenv("RANK", "3")
    mon, client = monitor(tmp_path, torch)
    client.push(leak(pids=[], ranks=[1, 3]))
    mon.findings()
    assert [a["finding"] for a in client.actions()] == ["memory_leak"]
    # One GPU that CUDA and NVML both see: a GPU-only finding on it counts, not the machine's.
    monkeypatch.delenv("RANK")
    torch = fake_torch(FakeCuda(devices=1))
    mon, client = monitor(tmp_path / "one", torch)
    client.push(dict(leak(pids=[], gpus=[0]), scope="machine"))
    mon.findings()
    assert client.actions() == []
    client.push(dict(leak(pids=[], gpus=[0]), id="oom_forecast"))
    mon.findings()
    assert [a["finding"] for a in client.actions()] == ["oom_forecast"]


def test_off_with_capture_memory_false(tmp_path):
    torch = fake_torch()
    mon, client = monitor(tmp_path, torch, capture_memory=False)
    client.push(leak())
    steps(mon, 30)
    assert torch.cuda.summaries == [] and torch.cuda.memory.calls == []
    assert client.actions() == [] and not (tmp_path / "captures").exists()
    with pytest.raises(ValueError, match="capture_history_steps"):
        gpumon.start(socket_path=str(tmp_path / "none.sock"), start_agent=False,
                     capture_history_steps=-1)
    with pytest.raises(ValueError, match="capture_history_steps"):
        Monitor(capture_history_steps=2.5)


def test_start_passes_the_options_on(tmp_path):
    mon = gpumon.start(socket_path=str(tmp_path / "none.sock"), start_agent=False,
                       capture_memory=False)
    assert mon._capture is None
    mon = gpumon.start(socket_path=str(tmp_path / "none.sock"), start_agent=False,
                       capture_history_steps=7)
    assert mon._capture.history_steps == 7


def test_cpu_torch_does_nothing(tmp_path, quiet):
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("this torch has CUDA")
    mon, client = monitor(tmp_path, torch)
    client.push(leak(), dict(leak(), id="oom_forecast"))
    steps(mon, 30)
    assert client.actions() == [] and not (tmp_path / "captures").exists()
    assert ours(quiet) == [] and mon.active
    mon.close()


def test_a_failing_summary_gives_one_warning_and_turns_the_capture_off(tmp_path, quiet):
    torch = fake_torch()
    torch.cuda.summary_error = RuntimeError("allocator says no")
    mon, client = monitor(tmp_path, torch)
    client.push(leak())
    steps(mon, 3)
    client.push(leak(), dict(leak(), id="oom_forecast"))
    steps(mon, 3)
    warned = ours(quiet)
    assert len(warned) == 1 and "allocator says no" in warned[0], warned
    assert mon._capture is None and mon.active and client.actions() == []
    assert torch.cuda.memory.calls == []
    assert not (tmp_path / "captures").exists()  # nothing half-written


def test_a_failure_after_the_files_were_made_leaves_none_behind(tmp_path, quiet):
    torch = fake_torch()

    def broken(device=None):
        raise RuntimeError("snapshot refused")

    torch.cuda.memory._snapshot = broken  # asked whether the script records history itself
    mon, client = monitor(tmp_path, torch)
    client.push(leak())
    steps(mon, 3)
    warned = ours(quiet)
    assert len(warned) == 1 and "snapshot refused" in warned[0], warned
    assert mon._capture is None and mon.active and client.actions() == []
    folder = tmp_path / "captures"
    assert not folder.exists() or list(folder.iterdir()) == [], list(folder.iterdir())


def test_a_failing_dump_turns_the_recording_off_and_says_there_is_no_history(tmp_path, quiet):
    torch = fake_torch()
    memory = torch.cuda.memory
    memory.dump_error = OSError("disk full")
    mon, client = monitor(tmp_path, torch, capture_history_steps=2)
    client.push(leak())
    steps(mon, 3)  # the first brings the finding, two more close the window
    assert memory.calls[1][0] == "dump" and memory.calls[2] == ("record", None, "all",
                                                                 sys.maxsize)
    warned = ours(quiet)
    assert len(warned) == 1 and "disk full" in warned[0]
    first, last = client.actions()
    assert last["summary_file"] == first["summary_file"] and "snapshot_file" not in last
    assert not os.path.exists(first["snapshot_file"])
    assert os.path.exists(first["summary_file"]) and mon.active and mon._capture is None
    steps(mon, 3)
    assert len(memory.calls) == 3


def test_a_recording_the_user_had_on_stays_on(tmp_path):
    torch = fake_torch(FakeCuda(FakeMemory(recording=True)))
    mon, client = monitor(tmp_path, torch, capture_history_steps=2)
    client.push(leak())
    steps(mon, 3)
    assert [c[0] for c in torch.cuda.memory.calls] == ["dump"]
    assert torch.cuda.memory.recording
    assert client.actions()[-1]["history_steps"] == 2


def test_no_history_before_torch_2_1_and_with_zero_steps(tmp_path):
    class OldMemory:  # torch 1.13 / 2.0: no _dump_snapshot
        pass

    torch = fake_torch(FakeCuda(OldMemory()))
    mon, client = monitor(tmp_path, torch)
    client.push(leak())
    mon.findings()
    action, = client.actions()
    assert "snapshot_file" not in action and "history_pending" not in action
    assert action["summary"].endswith("(no allocation history before torch 2.1)")
    torch = fake_torch()
    mon, client = monitor(tmp_path / "zero", torch, capture_history_steps=0)
    client.push(leak())
    steps(mon, 3)
    assert torch.cuda.memory.calls == [] and "snapshot_file" not in client.actions()[0]


def test_never_over_another_file(tmp_path):
    folder = tmp_path / "captures"
    folder.mkdir(mode=0o755)
    taken = folder / ("gpumon-memory-%d-step0-memory_leak.pickle" % PID)
    taken.write_text("the user's")
    mon, client = monitor(tmp_path)
    client.push(leak())
    mon.findings()
    action, = client.actions()
    assert action["summary_file"].endswith("-step0-memory_leak-1.txt")
    assert action["snapshot_file"].endswith("-step0-memory_leak-1.pickle")
    assert taken.read_text() == "the user's" and mode(folder) == 0o755
    assert not (folder / ("gpumon-memory-%d-step0-memory_leak.txt" % PID)).exists()


def test_close_dumps_an_open_window_before_the_bye(tmp_path):
    torch = fake_torch()
    mon, client = monitor(tmp_path, torch)
    client.push(leak())
    steps(mon, 3)  # the first brings the finding
    mon.close()
    assert [c[0] for c in torch.cuda.memory.calls] == ["record", "dump", "record"]
    kinds = [m.get("action", m["type"]) for m in client.lines if m["type"] != "step"]
    assert kinds == ["memory_captured", "memory_captured", "bye"]
    assert client.actions()[1]["history_steps"] == 2


def test_the_step_calls_run_the_housekeeping_only_while_a_window_is_open(tmp_path, monkeypatch):
    """A real _gpumon.Client (no agent behind it): its hand-over asks for the Python housekeeping
    only for news, and while the capture's window is open, at every hand-over."""
    from gpumon import _gpumon
    monkeypatch.setattr(_monitor, "_HOUSEKEEPING_INTERVAL", 1e-12)  # every step hands over
    torch = fake_torch()
    mon = Monitor(_gpumon.Client(str(tmp_path / "none.sock")), "none.sock", torch=torch,
                  oom_dir=str(tmp_path), capture_history_steps=4)
    calls = []
    housekeeping = mon._housekeeping
    mon._housekeeping = lambda: (calls.append(mon._step_number()), housekeeping())
    for _ in range(5):
        mon.step()
    assert calls == []
    mon._findings = [leak()]  # as if the agent had pushed it
    mon._capture_findings()
    for _ in range(10):
        mon.step()
    assert calls == [6, 7, 8, 9]  # the window's 4 steps, then none
    assert [c[0] for c in torch.cuda.memory.calls] == ["record", "dump", "record"]
