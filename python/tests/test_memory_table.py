# SPDX-License-Identifier: MIT
"""mon.log_table() / gpumon.start(table_interval_s=...): the memory table (docs/python.md "A
table in the log"). An injected clock moves time, a stand-in torch.cuda gives the allocator's
bytes: no sleeps, no GPU. The CPU case runs on the real torch where it is installed.

Environment: PYTHONPATH=<repo>/python (the _gpumon extension built).
"""
import io
import json
import types
import warnings

import pytest

import gpumon
from gpumon import _monitor, _table
from gpumon._monitor import Monitor
from fake_client import FakeClient, FakeEvent  # noqa: E402

MIB = 1024 * 1024


class Clock:
    """time.monotonic for the table, moved by the test."""

    def __init__(self):
        self.t = 100.0

    def __call__(self):
        return self.t


class FakeCuda:
    """torch.cuda as the table reads it: `stats[i]` are device i's allocator bytes."""

    def __init__(self, stats, current=0, initialized=True):
        self.stats = stats
        self.current = current
        self.initialized = initialized
        self.asked = []
        self.broken = None

    Event = FakeEvent  # the step clock's GPU timer

    def is_available(self):
        return True

    def is_initialized(self):
        return self.initialized

    def current_device(self):
        assert self.initialized, "the table must not initialise CUDA"
        return self.current

    def device_count(self):  # only the table asks
        if self.broken is not None:
            raise self.broken
        return len(self.stats)

    def memory_stats(self, device):
        self.asked.append(device)
        allocated, reserved = self.stats[device]
        return {"allocated_bytes.all.current": allocated, "reserved_bytes.all.current": reserved}

    def synchronize(self):
        raise AssertionError("gpumon must never synchronize")


def fake_torch(cuda):
    return types.SimpleNamespace(cuda=cuda, __version__="9.9")


def data_lines(text):
    """The table's rows (header lines left out), split into cells."""
    return [line.split() for line in text.splitlines() if "Elapsed" not in line]


@pytest.fixture
def fresh_warnings():
    _monitor._warned.discard("table")  # once per process: an earlier test may have warned
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield caught


def ours(caught):
    return [w for w in caught if issubclass(w.category, gpumon.GpumonWarning)]


def test_rows_give_allocated_and_reserved_in_whole_mib_and_dashes_for_what_is_missing():
    cuda = FakeCuda({0: (1536 * MIB + 1, 2048 * MIB), 1: (0, 0), 2: (MIB - 1, 20 * MIB)})
    mon = Monitor(torch=fake_torch(cuda))  # no agent: the table works all the same
    out, clock = io.StringIO(), Clock()
    mon.log_table(2.0, file=out, clock=clock)
    for _ in range(7):
        mon.step()
    clock.t += 2.0
    mon.step()
    lines = out.getvalue().splitlines()
    assert lines[0].split() == ["gpumon:", "Elapsed", "Step", "GPU", "Util%", "Alloc(MiB)",
                                "Reserv(MiB)", "Temp(C)"]
    # The current device, and device 2 where this process's allocator holds memory; not 1.
    # MiB as the seed's `bytes // 1024**2`; utilization and temperature are the agent's: "-".
    assert data_lines(out.getvalue()) == [
        ["gpumon:", "0:00:02", "8", "0", "-", "1536", "2048", "-"],
        ["gpumon:", "0:00:02", "8", "2", "-", "0", "20", "-"]]
    assert sorted(set(cuda.asked)) == [0, 1, 2]


def test_it_prints_once_per_interval_on_the_injected_clock():
    cuda = FakeCuda({0: (5 * MIB, 8 * MIB)})
    mon = Monitor(torch=fake_torch(cuda))
    out, clock = io.StringIO(), Clock()
    mon.log_table(2.0, file=out, clock=clock)
    printed_at = []
    for step in range(1, 41):  # 40 steps of 0.25 s
        clock.t += 0.25
        before = out.getvalue()
        mon.step()
        if out.getvalue() != before:
            printed_at.append(step)
    assert printed_at == [8, 16, 24, 32, 40]  # 2 s, 4 s, ... after log_table()
    assert [row[1:3] for row in data_lines(out.getvalue())] == [
        ["0:00:02", "8"], ["0:00:04", "16"], ["0:00:06", "24"], ["0:00:08", "32"],
        ["0:00:10", "40"]]
    clock.t += 1.99
    mon.step()
    assert len(data_lines(out.getvalue())) == 5  # not yet
    clock.t += 0.01
    mon.step()
    assert len(data_lines(out.getvalue())) == 6


def test_the_header_repeats_every_20_blocks():
    mon = Monitor(torch=fake_torch(FakeCuda({0: (0, 0)})))
    out, clock = io.StringIO(), Clock()
    mon.log_table(1.0, file=out, clock=clock)
    for _ in range(41):
        clock.t += 1.0
        mon.step()
    headers = [i for i, line in enumerate(out.getvalue().splitlines()) if "Elapsed" in line]
    assert headers == [0, 21, 42]  # before blocks 1, 21 and 41


def test_off_by_default_nothing_printed_nor_read(capsys):
    cuda = FakeCuda({0: (MIB, MIB)})
    idle = Monitor(torch=fake_torch(cuda))
    assert idle._table is None and "step" not in idle.__dict__  # the plain no-op step()
    client = FakeClient()
    mon = Monitor(client, "fake.sock", allocator_interval_s=3600.0, torch=fake_torch(cuda))
    for _ in range(600):  # housekeeping due at once, then every 512 steps
        idle.step()
        mon.step()
    mon.close()
    assert capsys.readouterr() == ("", "")
    assert cuda.asked == [0]  # the step clock's one allocator read; none for a table


def test_the_table_prints_from_the_step_calls_of_an_attached_monitor(monkeypatch):
    monkeypatch.setattr(_monitor, "_HOUSEKEEPING_INTERVAL", 1e-9)  # a hand-over every step
    cuda = FakeCuda({0: (3 * MIB, 4 * MIB)}, current=0)
    client = FakeClient()
    mon = Monitor(client, "fake.sock", allocator_interval_s=3600.0, torch=fake_torch(cuda))
    out, clock = io.StringIO(), Clock()
    mon.log_table(2.0, file=out, clock=clock)
    for _ in range(3):
        clock.t += 1.0
        with mon.step():
            pass
    assert data_lines(out.getvalue()) == [["gpumon:", "0:00:02", "2", "0", "-", "3", "4", "-"]]
    mon.log_table(None)  # stops it
    clock.t += 10.0
    mon.step()
    assert len(data_lines(out.getvalue())) == 1
    mon.close()
    assert [m["step"] for m in client.lines if m["type"] == "step"] == [0, 1, 2, 3]


def test_a_real_client_runs_the_housekeeping_only_while_the_table_is_on(monkeypatch):
    from gpumon import _gpumon
    monkeypatch.setattr(_monitor, "_HOUSEKEEPING_INTERVAL", 1e-9)
    calls = []
    monkeypatch.setattr(Monitor, "_tick_table", lambda self, steps: calls.append(steps))
    client = _gpumon.Client("/nonexistent/gpumon-test.sock")  # no agent: steps only queue
    cpu_torch = types.SimpleNamespace(cuda=types.SimpleNamespace(is_available=lambda: False))
    mon = Monitor(client, "/nonexistent/gpumon-test.sock", torch=cpu_torch)
    for _ in range(3):
        mon.step()
    assert calls == []  # the C++ hand-over had no news: no Python ran
    mon.log_table(2.0, file=io.StringIO(), clock=Clock())
    for _ in range(3):
        mon.step()
    assert calls == [4, 5, 6]
    mon.log_table(None)
    mon.step()
    assert calls == [4, 5, 6]


def test_cuda_not_initialised_yet_is_said_and_not_initialised():
    cuda = FakeCuda({0: (MIB, MIB)}, initialized=False)
    mon = Monitor(torch=fake_torch(cuda))
    out, clock = io.StringIO(), Clock()
    mon.log_table(2.0, file=out, clock=clock)
    clock.t += 2.5
    mon.step()
    assert data_lines(out.getvalue()) == [
        ["gpumon:", "0:00:02", "1", "-", "-", "-", "-", "-", "(CUDA", "not", "initialised",
         "yet)"]]
    assert cuda.asked == []


def test_cpu_only_torch_gives_elapsed_and_steps_and_says_no_cuda_device(monkeypatch):
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("a CUDA machine")
    monkeypatch.setattr(_monitor, "_HOUSEKEEPING_INTERVAL", 1e-9)  # a hand-over every step
    mon = Monitor(client=FakeClient(), torch=torch)
    out, clock = io.StringIO(), Clock()
    mon.log_table(2.0, file=out, clock=clock)
    model = torch.nn.Linear(4, 1)
    for _ in range(5):
        clock.t += 0.5
        with mon.step():
            model(torch.ones(2, 4)).sum().backward()
    mon.close()
    assert data_lines(out.getvalue()) == [
        ["gpumon:", "0:00:02", "4", "-", "-", "-", "-", "-", "(no", "CUDA", "device)"]]


def test_torch_not_imported_is_said():
    assert _table.read_rows(None) == ([], "torch not imported")
    text = _table.format_block(61.9, 12, [], "torch not imported", header=False)
    assert text.split() == ["gpumon:", "0:01:01", "12", "-", "-", "-", "-", "-", "(torch", "not",
                            "imported)"]


def test_ranks_are_named_and_stderr_is_the_default(monkeypatch, capsys):
    monkeypatch.setenv("RANK", "3")
    mon = Monitor(torch=fake_torch(FakeCuda({0: (0, MIB)})))
    clock = Clock()
    mon.log_table(1.0, clock=clock)
    clock.t += 1.0
    mon.step()
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and all(line.startswith("gpumon rank 3: ") for line in err)


def test_a_failing_read_stops_the_table_with_one_warning_and_training_goes_on(
        fresh_warnings, monkeypatch):
    monkeypatch.setattr(_monitor, "_HOUSEKEEPING_INTERVAL", 1e-9)
    cuda = FakeCuda({0: (MIB, MIB)})
    client = FakeClient()
    mon = Monitor(client, "fake.sock", allocator_interval_s=3600.0, torch=fake_torch(cuda))
    out, clock = io.StringIO(), Clock()
    mon.log_table(1.0, file=out, clock=clock)
    cuda.broken = RuntimeError("device_count broke")
    for _ in range(5):
        clock.t += 1.0
        mon.step()
    assert out.getvalue() == ""
    warned = ours(fresh_warnings)
    assert len(warned) == 1 and "device_count broke" in str(warned[0].message)
    assert mon._table is None and mon.active  # the table stopped, the monitor did not
    mon.close()
    assert len([m for m in client.lines if m["type"] == "step"]) == 5


def test_an_unwritable_log_stops_the_table_with_one_warning(fresh_warnings):
    class Closed:
        def write(self, text):
            raise ValueError("I/O operation on closed file")

    mon = Monitor(torch=fake_torch(FakeCuda({0: (MIB, MIB)})))
    clock = Clock()
    mon.log_table(1.0, file=Closed(), clock=clock)
    for _ in range(5):
        clock.t += 1.0
        assert mon.step() is _monitor._NULL
    assert len(ours(fresh_warnings)) == 1
    assert "step" not in mon.__dict__  # back to the plain no-op step()


def test_a_forked_child_prints_nothing(monkeypatch):
    mon = Monitor(torch=fake_torch(FakeCuda({0: (MIB, MIB)})))
    out, clock = io.StringIO(), Clock()
    mon.log_table(1.0, file=out, clock=clock)
    real_pid = _table.os.getpid()
    monkeypatch.setattr(_table.os, "getpid", lambda: real_pid + 1)
    clock.t += 5.0
    mon.step()
    assert out.getvalue() == ""


@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), float("inf"), "2s", [2]])
def test_a_bad_interval_fails_at_setup(bad):
    with pytest.raises(ValueError, match="interval"):
        Monitor().log_table(bad)
    with pytest.raises(ValueError, match="interval"):
        gpumon.start(table_interval_s=bad)


def test_start_takes_the_interval(tmp_path, fresh_warnings):
    mon = gpumon.start(socket_path=str(tmp_path / "none.sock"), start_agent=False,
                       table_interval_s=5)  # no agent there: steps queue, the table prints
    assert mon._table.interval_s == 5.0
    mon.close()
    assert gpumon.start(socket_path=str(tmp_path / "none.sock"), start_agent=False)._table is None


def test_utilization_and_temperature_come_from_the_nodes_table(tmp_path):
    """The node publishes its GPUs' readings and the GPU it placed each rank on beside the agent
    socket (<socket>.ranks.json): the current device's row shows them; a table that does not
    place this process, or none at all, leaves them missing."""
    import os
    import time
    path = tmp_path / "agent.sock.ranks.json"
    written = time.time() * 1000
    table = {"version": 1, "written_ms": written,
             "ranks": [{"pid": os.getpid(), "gpu": 5, "step": 3},
                       {"pid": 1, "gpu": 0, "step": 9}],
             "gpus": [{"index": 0, "util_pct": 10, "temperature_c": 40},
                      {"index": 5, "util_pct": 97, "temperature_c": 61}]}
    path.write_text(json.dumps(table))
    assert _table.node_readings(str(path), os.getpid()) == (97, 61)
    assert _table.node_readings(str(path), 12345678) == (None, None)  # not placed
    assert _table.node_readings(str(tmp_path / "none.json"), os.getpid()) == (None, None)
    # A node that stopped writing (its table 10 s old) gives no readings.
    assert _table.node_readings(str(path), os.getpid(), now_ms=written + 10000) == (None, None)
    # Never through a link, never waiting on a FIFO (the training thread reads it).
    os.symlink(path, tmp_path / "link.json")
    assert _table.node_readings(str(tmp_path / "link.json"), os.getpid()) == (None, None)
    os.mkfifo(tmp_path / "fifo.json")
    assert _table.node_readings(str(tmp_path / "fifo.json"), os.getpid()) == (None, None)
    (tmp_path / "bad.json").write_text("{not json")
    assert _table.node_readings(str(tmp_path / "bad.json"), os.getpid()) == (None, None)

    cuda = FakeCuda({0: (1536 * MIB, 2048 * MIB), 1: (MIB, 20 * MIB)})
    out, clock = io.StringIO(), Clock()
    printer = _table.MemoryTable(2.0, out, clock, node_file=str(path))
    clock.t += 2.0
    assert printer.tick(8, fake_torch(cuda))
    # The current device (0) is the GPU the node placed this process on; device 1 is not.
    assert data_lines(out.getvalue()) == [
        ["gpumon:", "0:00:02", "8", "0", "97", "1536", "2048", "61"],
        ["gpumon:", "0:00:02", "8", "1", "-", "1", "20", "-"]]
