# SPDX-License-Identifier: MIT
"""gpumon's Python package end to end: a real torch training loop (CPU) with DataLoader workers
forked, against a real `gpumon agent` on the fake NVML; the steps are read back from the
recording with `gpumon export --steps`.

Environment (set by ctest): PYTHONPATH=<repo>/python, GPUMON_TEST_BINARY (the gpumon binary),
GPUMON_TEST_FAKE_NVML (the fake libnvidia-ml.so.1).
"""
import json
import os
import signal
import subprocess
import sys
import time
import warnings

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "src", "util", "testing"))
from wait_for import TIMEOUT_S, wait_for  # noqa: E402
from fake_client import FakeClient  # noqa: E402
BINARY = os.environ.get("GPUMON_TEST_BINARY", os.path.join(REPO, "build", "gpumon"))
FAKE_NVML = os.environ.get(
    "GPUMON_TEST_FAKE_NVML", os.path.join(os.path.dirname(BINARY), "fake-nvml", "libnvidia-ml.so.1"))

torch = pytest.importorskip("torch")


def base_env(tmp_path):
    env = dict(os.environ)
    for k in ("GPUMON_AGENT_SOCKET", "GPUMON_BINARY", "GPUMON_RECORD", "RANK", "LOCAL_RANK",
              "WORLD_SIZE"):
        env.pop(k, None)
    env["PYTHONPATH"] = os.path.join(REPO, "python")
    env["XDG_RUNTIME_DIR"] = str(tmp_path)  # the default socket lives here, not in /run
    env["GPUMON_NVML_LIBRARY"] = FAKE_NVML
    env["GPUMON_FAKE_SCENARIO"] = "demo"
    # Ranks started together on a loaded machine may take longer than the 5 s default to see
    # their agent listen.
    env["GPUMON_AGENT_START_TIMEOUT_S"] = "120"
    return env


class Agent:
    def __init__(self, tmp_path, name="agent"):
        self.sock = str(tmp_path / (name + ".sock"))
        self.recording = str(tmp_path / (name + ".gpumon"))
        self.err = open(tmp_path / (name + ".err"), "w+")
        self.proc = subprocess.Popen(
            [BINARY, "agent", "--socket", self.sock, "-o", self.recording, "--interval", "100"],
            env=base_env(tmp_path), stderr=self.err)
        assert wait_for(lambda: os.path.exists(self.sock)), "the agent did not listen"

    def stop(self, sig=signal.SIGTERM):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        return self.proc.wait(timeout=TIMEOUT_S)

    def stop_after_byes(self, count=1):
        """The agent stops without reading what its clients still have in flight, so first wait
        until the recording holds every bye (it commits every second); the exit status."""
        def byes():
            return sum(e["kind"] == "bye" for e in readable(self.rank_events, []))
        assert wait_for(lambda: byes() >= count), "no bye recorded"
        return self.stop()

    def steps(self):
        out = subprocess.check_output(
            [BINARY, "export", self.recording, "--steps", "--format", "jsonl"], text=True)
        return [json.loads(line) for line in out.splitlines()]

    def rank_events(self):
        out = subprocess.check_output(
            [BINARY, "export", self.recording, "--table", "rank_events", "--format", "jsonl"],
            text=True)
        return [json.loads(line) for line in out.splitlines()]


@pytest.fixture
def agent(tmp_path):
    a = Agent(tmp_path)
    yield a
    a.stop()


def readable(read, default):
    """read(), or `default` while the recording cannot be read yet."""
    try:
        return read()
    except subprocess.CalledProcessError:
        return default


def ended(path):
    import sqlite3
    try:
        db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
        try:
            return db.execute("SELECT count(*) FROM meta WHERE key = 'end_time'").fetchone()[0] == 1
        finally:
            db.close()
    except sqlite3.Error:
        return False


def train(tmp_path, env, *args, timeout=120):
    r = subprocess.run([sys.executable, os.path.join(HERE, "train_loop.py")] + [str(x) for x in args],
                       env=env, capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    pid = int(lines[0].split()[1])
    done, warned = map(int, lines[-1].split()[1:])
    return pid, done, warned, r.stdout


def test_steps_of_a_training_loop_are_recorded_with_the_data_wait(tmp_path, agent):
    env = base_env(tmp_path)
    env.update(GPUMON_AGENT_SOCKET=agent.sock, RANK="0", LOCAL_RANK="0", WORLD_SIZE="1")
    pid, done, warned, out = train(tmp_path, env, 12, "--item-sleep", "0.03", "--worker-misuse")
    assert (done, warned) == (12, 0), out
    assert agent.stop_after_byes() == 0
    steps = agent.steps()
    # Exactly the parent's 12 steps, in order: forked workers sent nothing and duplicated nothing.
    assert [s["step"] for s in steps] == list(range(12))
    assert {s["pid"] for s in steps} == {pid}
    for s in steps:
        assert (s["rank"], s["local_rank"], s["world_size"], s["device"]) == (0, 0, 1, "cpu")
        assert s["t_end_s"] >= s["t_start_s"] > time.time() - 600
        assert s["cpu_step_s"] >= s["data_wait_s"] >= 0
        assert s["gpu_step_s"] is None and s["allocated_bytes"] is None  # CPU torch
    # Two workers each sleep 30 ms per item, 2 items a batch: the first step waits at least the
    # 60 ms its batch takes (later ones wait too unless the loop itself runs slower than the
    # workers, as on a loaded machine).
    waited = [s["data_wait_s"] for s in steps]
    assert waited[0] > 0.03, waited
    events = agent.rank_events()
    assert [e["kind"] for e in events] == ["hello", "bye"]
    assert events[0]["detail"]["torch_version"] == torch.__version__
    assert events[0]["pid"] == pid


def test_with_form_times_the_body_and_allocator_and_gpu_times_arrive(tmp_path, agent):
    env = base_env(tmp_path)
    env["GPUMON_AGENT_SOCKET"] = agent.sock
    pid, done, warned, out = train(tmp_path, env, 6, "--with", "--step-sleep", "0.02", "--mem",
                                   "--gpu-timer")
    assert (done, warned) == (6, 0), out
    assert agent.stop_after_byes() == 0
    steps = agent.steps()
    assert [s["step"] for s in steps] == list(range(6))
    for i, s in enumerate(steps):
        assert s["cpu_step_s"] >= 0.02  # the body's sleep
        assert s["gpu_step_s"] == (i + 1) / 1000.0  # read one step later, never by a sync
        assert s["allocated_bytes"] == 1001 + i and s["reserved_bytes"] == 4096
        assert s["inactive_split_bytes"] == 100 and s["reserved_peak_bytes"] == 8192
        assert s["num_alloc_retries"] == 1 and s["num_ooms"] == 0
        assert s["rank"] is None  # no RANK in the environment


def test_agent_killed_mid_run_gives_one_warning_and_training_goes_on(tmp_path, agent):
    env = base_env(tmp_path)
    env["GPUMON_AGENT_SOCKET"] = agent.sock
    flag = tmp_path / "five-steps"
    proc = subprocess.Popen(
        [sys.executable, os.path.join(HERE, "train_loop.py"), "40", "--step-sleep", "0.05",
         "--flag", str(flag)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert wait_for(flag.exists)
    agent.stop(signal.SIGKILL)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, out + err
    last = out.splitlines()[-1].split()
    assert last[:3] == ["done", "40", "1"], out + err
    assert "lost the agent" in out, out


def test_training_killed_mid_run_leaves_the_steps_so_far(tmp_path, agent):
    env = base_env(tmp_path)
    env["GPUMON_AGENT_SOCKET"] = agent.sock
    flag = tmp_path / "five-steps"
    proc = subprocess.Popen(
        [sys.executable, os.path.join(HERE, "train_loop.py"), "500", "--step-sleep", "0.02",
         "--flag", str(flag)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert wait_for(flag.exists)
    # The steps so far reach the agent (a hand-over a second) and its recording (a commit a
    # second), which is readable while the agent still records.
    assert wait_for(lambda: len(readable(agent.steps, [])) >= 5)
    os.killpg(os.getpgid(proc.pid), 0)  # still alive
    proc.kill()
    proc.communicate(timeout=TIMEOUT_S)
    # The agent goes on and records the disconnect.
    assert wait_for(lambda: [e["kind"] for e in readable(agent.rank_events, [])]
                    == ["hello", "disconnect"])
    assert agent.stop() == 0
    steps = agent.steps()
    assert [s["step"] for s in steps] == list(range(len(steps)))
    kinds = [e["kind"] for e in agent.rank_events()]
    assert kinds == ["hello", "disconnect"]


def test_gpumon_record_runs_the_training_and_records_its_steps(tmp_path):
    env = base_env(tmp_path)
    env["GPUMON_BINARY"] = str(tmp_path / "no-such-gpumon")  # the record's socket is enough
    rec = tmp_path / "run.gpumon"
    r = subprocess.run([BINARY, "record", "-o", str(rec), "--interval", "100", "--",
                        sys.executable, os.path.join(HERE, "train_loop.py"), "7"],
                       env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines()[-1] == "done 7 0", r.stdout
    assert "7 training steps" in r.stderr
    out = subprocess.check_output([BINARY, "export", str(rec), "--steps", "--format", "jsonl"],
                                  text=True)
    assert [json.loads(line)["step"] for line in out.splitlines()] == list(range(7))
    samples = subprocess.check_output([BINARY, "export", str(rec), "--format", "csv"], text=True)
    assert len(samples.splitlines()) > 8  # and the GPUs' samples of the same run


def test_no_agent_and_no_binary_is_a_no_op_with_one_warning(tmp_path):
    env = base_env(tmp_path)
    env["GPUMON_BINARY"] = str(tmp_path / "no-such-gpumon")
    pid, done, warned, out = train(tmp_path, env, 5, "--with")
    assert (done, warned) == (5, 1), out
    assert "no agent listens on %s/gpumon/agent.sock" % tmp_path in out, out
    assert "gpumon does nothing" in out


def test_a_socket_folder_others_can_write_is_refused_with_one_warning(tmp_path):
    # Another local user who can write to the default folder could plant the start lock as a
    # link to a file of ours, or a fake agent: nothing is created or started, one warning says why.
    env = base_env(tmp_path)
    env["GPUMON_BINARY"] = BINARY
    folder = tmp_path / "gpumon"
    folder.mkdir()
    os.chmod(folder, 0o777)
    victim = tmp_path / "victim"
    os.symlink(victim, folder / ".agent-start.lock")
    pid, done, warned, out = train(tmp_path, env, 5)
    assert (done, warned) == (5, 1), out
    assert "%s is yours but writable by other users (mode 0777)" % folder in out, out
    assert not os.path.lexists(victim)
    assert not (folder / "agent.sock").exists()


def test_an_agent_is_started_when_none_runs(tmp_path):
    env = base_env(tmp_path)
    env.update(GPUMON_BINARY=BINARY, GPUMON_RECORD=str(tmp_path / "auto.gpumon"),
               GPUMON_AGENT_IDLE_EXIT_S="0.5")
    pid, done, warned, out = train(tmp_path, env, 5)
    assert (done, warned) == (5, 0), out
    sock = tmp_path / "gpumon" / "agent.sock"
    assert oct(os.stat(tmp_path / "gpumon").st_mode & 0o777) == "0o700"
    assert wait_for(lambda: not sock.exists()), "the started agent did not exit when idle"
    # It removes its socket, then closes the recording: wait for the recording's end time.
    assert wait_for(lambda: ended(tmp_path / "auto.gpumon"))
    out = subprocess.check_output([BINARY, "export", str(tmp_path / "auto.gpumon"), "--steps"],
                                  text=True)
    assert len(out.splitlines()) == 1 + 5


def test_four_ranks_starting_at_once_share_one_started_agent(tmp_path):
    procs = []
    for rank in range(4):
        env = base_env(tmp_path)
        env.update(GPUMON_BINARY=BINARY, GPUMON_RECORD=str(tmp_path / "ddp.gpumon"),
                   GPUMON_AGENT_IDLE_EXIT_S="1", RANK=str(rank), LOCAL_RANK=str(rank),
                   WORLD_SIZE="4")
        procs.append(subprocess.Popen(
            [sys.executable, os.path.join(HERE, "train_loop.py"), "3"], env=env,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0 and out.splitlines()[-1] == "done 3 0", out + err
    assert wait_for(lambda: ended(tmp_path / "ddp.gpumon"))
    out = subprocess.check_output(
        [BINARY, "export", str(tmp_path / "ddp.gpumon"), "--steps", "--format", "jsonl"], text=True)
    steps = [json.loads(line) for line in out.splitlines()]
    by_rank = {}
    for s in steps:
        by_rank.setdefault(s["rank"], []).append(s["step"])
        assert s["world_size"] == 4 and s["local_rank"] == s["rank"]
    assert {r: sorted(v) for r, v in by_rank.items()} == {r: [0, 1, 2] for r in range(4)}


def test_a_forked_child_is_inert_in_process(tmp_path, agent):
    import gpumon
    env_sock = agent.sock
    mon = gpumon.start(socket_path=env_sock)
    assert mon.active
    mon.step()
    batches = iter(mon.wrap(range(4)))  # made in the parent, iterated in the child
    pid = os.fork()
    if pid == 0:
        ok = (not mon.active and mon.step() is not None and mon.wrap([1, 2]) == [1, 2]
              and list(batches) == [0, 1, 2, 3] and mon._clock.steps() == 1
              and mon._client.send('{"type":"bye"}') is False)
        mon.close()  # nothing: not the owner
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 0
    mon.step()
    mon.close()
    assert mon.stats() == {}
    assert agent.stop_after_byes() == 0
    assert [s["step"] for s in agent.steps()] == [0, 1]
    assert [e["kind"] for e in agent.rank_events()] == ["hello", "bye"]


def test_errors_inside_gpumon_never_reach_the_loop(tmp_path, agent):
    import gpumon
    mon = gpumon.start(socket_path=agent.sock)

    def broken():
        raise RuntimeError("allocator stats broke")

    mon._configure(mem_fn=broken)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in mon.wrap(range(3)):
            mon.step()
        with mon.step():
            pass
        mon.close()
    ours = [w for w in caught if issubclass(w.category, gpumon.GpumonWarning)]
    assert len(ours) == 1 and "allocator stats broke" in str(ours[0].message)
    assert not mon.active
    # The user's own loader errors are theirs: they pass through unchanged.
    mon2 = gpumon.start(socket_path=agent.sock)

    def bad_loader():
        yield 1
        raise ValueError("bad batch")

    with pytest.raises(ValueError, match="bad batch"):
        for _ in mon2.wrap(bad_loader()):
            mon2.step()
    mon2.close()


def test_the_hand_over_runs_in_cxx_and_calls_python_only_with_news(tmp_path, agent,
                                                                   monkeypatch):
    import gpumon
    monkeypatch.setattr(gpumon._monitor, "_HOUSEKEEPING_INTERVAL", 0.2)
    mon = gpumon.start(socket_path=agent.sock)
    calls = []  # what the client had at each call of Python's housekeeping
    housekeeping = mon._housekeeping
    client = mon._client
    mon._housekeeping = lambda: (
        calls.append((client.findings_seq(), client.disconnects())), housekeeping())
    for _ in mon.wrap(range(60)):  # 0.6 s: the steps are handed over about three times
        time.sleep(0.01)
        mon.step()
    # The steps reached the agent without a flush() of ours, and Python's housekeeping ran only
    # for news: the agent's findings line, which it sends after the hello.
    assert wait_for(lambda: client.stats()["sent"] >= 40), client.stats()
    assert len(calls) <= 1 and all(seq > 0 for seq, _ in calls), calls
    before = len(calls)
    # A lost agent is news: Python's housekeeping runs and warns once.
    agent.stop(signal.SIGKILL)
    gpumon._monitor._warned.discard("agent-lost")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        def warned():
            mon.step()
            return caught

        wait_for(warned, interval=0.01)
    assert len(calls) > before and calls[-1][1] == 1 and mon.active
    assert [str(w.message) for w in caught if "lost the agent" in str(w.message)], caught
    mon.close()


def test_a_fast_loop_hands_over_every_512_steps_whatever_the_interval(agent, monkeypatch):
    import gpumon
    monkeypatch.setattr(gpumon._monitor, "_HOUSEKEEPING_INTERVAL", 3600.0)
    mon = gpumon.start(socket_path=agent.sock)
    client = mon._client
    for _ in mon.wrap(range(1100)):  # the first call hands over; then 512 steps wait, twice
        mon.step()
    # No flush() of ours: the steps went because enough of them waited, not because time passed.
    assert wait_for(lambda: client.stats()["sent"] >= 1024), client.stats()
    assert client.stats()["sent"] < 1100 and client.stats()["dropped"] == 0, client.stats()
    mon.close()
    assert client.stats()["sent"] >= 1100, client.stats()  # close() sends the rest (and a bye)


def test_a_failing_hand_over_switches_gpumon_off_with_one_warning():
    import gpumon
    from gpumon._monitor import Monitor

    class BrokenFlush(_FakeClient):
        def flush(self):
            raise OSError("flush broke")

    mon = Monitor(client=BrokenFlush())
    gpumon._monitor._warned.discard("internal")  # once per process: an earlier test may have
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in mon.wrap(range(3)):  # the first call's housekeeping is due at once
            ctx = mon.step()
            with ctx:
                pass
        assert mon.step() is gpumon._monitor._NULL
    ours = [w for w in caught if issubclass(w.category, gpumon.GpumonWarning)]
    assert len(ours) == 1 and "flush broke" in str(ours[0].message)
    assert not mon.active and not mon._clock.active


def test_a_monitor_is_freed_when_dropped_and_its_calls_outlive_it_harmlessly():
    import gc
    import weakref
    from gpumon._monitor import Monitor

    client = _FakeClient()
    mon = Monitor(client=client)
    step = mon.step
    batches = iter(mon.wrap(range(3)))
    next(batches)
    step()
    ref = weakref.ref(mon)
    del mon
    gc.collect()
    assert ref() is None  # nothing it hands its calls keeps it alive
    assert list(batches) == [1, 2]
    step()  # its housekeeping has no Monitor to run: nothing happens
    with step():
        pass


def test_the_with_form_lets_the_body_s_errors_through_and_times_the_body():
    from gpumon._monitor import Monitor

    client = _FakeClient()
    mon = Monitor(client=client)
    with pytest.raises(ValueError, match="the user's"):
        with mon.step():
            raise ValueError("the user's")
    assert mon.active  # not gpumon's error: it goes on
    with mon.step():
        time.sleep(0.02)
    scope = mon.step()  # a plain call: one more step
    with pytest.raises(TypeError):
        type(scope)()
    with pytest.raises(TypeError):
        scope.__exit__(None)
    mon.close()
    steps = [m for m in client.lines if m["type"] == "step"]
    assert [m["step"] for m in steps] == [0, 1, 2]  # the step whose body raised counts too
    assert steps[1]["cpu_step_s"] >= 0.02


def test_the_wrapped_loader_keeps_its_length_and_runs_every_epoch():
    from gpumon import _gpumon
    from gpumon._monitor import Monitor

    client = _FakeClient()
    mon = Monitor(client=client)
    loader = [10, 20, 30]
    wrapped = mon.wrap(loader)
    assert len(wrapped) == 3
    for _ in range(2):
        assert [b for b in wrapped if mon.step() or True] == loader
    mon.close()
    assert [m["step"] for m in client.lines if m["type"] == "step"] == list(range(6))
    with pytest.raises(TypeError):
        type(iter(Monitor(client=_FakeClient()).wrap(loader)))()
    with pytest.raises(TypeError):
        mon._clock.timed_iter([1], None)  # an iterator and a weakref.ref, or nothing
    assert isinstance(_gpumon.StepClock(), _gpumon.StepClock)


_FakeClient = FakeClient


class _FakeCuda:
    """torch.cuda as gpumon uses it, with a clock the test moves and events it completes."""
    clock = 0.0
    events = []
    devices_asked = []

    class Event:
        def __init__(self, enable_timing):
            assert enable_timing
            self.t, self.done = None, False

        def record(self):
            self.t = _FakeCuda.clock
            _FakeCuda.events.append(self)

        def query(self):
            return self.done

        def elapsed_time(self, end):
            return (end.t - self.t) * 1000.0  # milliseconds, as torch gives it

    @staticmethod
    def is_available():
        return True

    @staticmethod
    def current_device():
        return 3

    @staticmethod
    def memory_stats(device):
        _FakeCuda.devices_asked.append(device)
        return {"allocated_bytes.all.current": 11, "reserved_bytes.all.current": 22,
                "active_bytes.all.current": 10, "inactive_split_bytes.all.current": 1,
                "allocated_bytes.all.peak": 33, "reserved_bytes.all.peak": 44,
                "num_alloc_retries": 0, "num_ooms": 2}

    @staticmethod
    def synchronize():
        raise AssertionError("gpumon must never synchronize")


def test_gpu_time_is_measured_at_a_bounded_rate():
    from gpumon._monitor import Monitor
    import types
    client = _FakeClient()
    _FakeCuda.events = []
    fake_torch = types.SimpleNamespace(cuda=_FakeCuda, __version__="9.9")
    mon = Monitor(client, "fake.sock", allocator_interval_s=60.0, torch=fake_torch,
                  gpu_interval_s=3600.0)
    for _ in range(50):
        for ev in _FakeCuda.events:
            ev.done = True
        mon.step()
    mon.close()
    steps = [m for m in client.lines if m["type"] == "step"]
    assert len(steps) == 50
    assert steps[0]["gpu_step_s"] is not None  # the first step is timed ...
    assert all(s["gpu_step_s"] is None for s in steps[1:])  # ... then none within the interval
    assert len(_FakeCuda.events) == 2  # two events recorded in all, not two a step


def test_cuda_path_reads_gpu_time_a_step_later_without_a_sync():
    from gpumon._monitor import Monitor
    import types
    client = _FakeClient()
    fake_torch = types.SimpleNamespace(cuda=_FakeCuda, __version__="9.9")
    mon = Monitor(client, "fake.sock", allocator_interval_s=0.0, torch=fake_torch,
                  gpu_interval_s=0.0)  # time every step (default: at most every 0.1 s)
    _FakeCuda.clock = 1.0
    mon.step()
    _FakeCuda.clock = 2.0
    mon.step()  # step 0 ends here (its events: recorded at 0 and 2)
    for ev in _FakeCuda.events:
        ev.done = True  # the GPU has passed everything recorded so far
    _FakeCuda.clock = 3.0
    mon.step()  # step 1 ends; step 0 is sent with its GPU time
    _FakeCuda.clock = 4.0
    mon.close()  # steps 1 and 2: their end events are not done: null, not a wait
    steps = [m for m in client.lines if m["type"] == "step"]
    assert [s["step"] for s in steps] == [0, 1, 2]
    assert steps[0]["gpu_step_s"] == 2.0
    assert steps[1]["gpu_step_s"] is None and steps[2]["gpu_step_s"] is None
    assert steps[0]["mem"] == {"allocated": 11, "reserved": 22, "active": 10,
                               "inactive_split": 1, "allocated_peak": 33, "reserved_peak": 44,
                               "num_alloc_retries": 0, "num_ooms": 2}
    assert set(_FakeCuda.devices_asked) == {3}
    assert client.lines[-1] == {"type": "bye"}
