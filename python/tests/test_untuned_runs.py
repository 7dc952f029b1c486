# SPDX-License-Identifier: MIT
"""Real CPU training runs with planted problems (untuned_train.py under `gpumon record`, the
fake NVML's demo GPUs beside them) and what `gpumon doctor` must say of them: the classes of
problem of docs/DIAGNOSES.md that synthetic replays alone do not prove."""
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from test_gpumon import BINARY, HERE, base_env

torch = pytest.importorskip("torch")
SCRIPT = os.path.join(HERE, "untuned_train.py")
sys.path.insert(0, os.path.join(HERE, "..", "..", "src", "util", "testing"))
from wait_for import TIMEOUT_S  # noqa: E402


def doctor(rec):
    r = subprocess.run([BINARY, "doctor", str(rec), "--json"], capture_output=True, text=True)
    assert r.returncode in (0, 1, 2), r.stderr
    return json.loads(r.stdout)


def record(tmp_path, *args, name="run"):
    rec = tmp_path / (name + ".gpumon")
    r = subprocess.run([BINARY, "record", "-o", str(rec), "--interval", "100", "--",
                        sys.executable, SCRIPT, *map(str, args)],
                       env=base_env(tmp_path), capture_output=True, text=True, timeout=TIMEOUT_S)
    assert r.returncode == 0 and "done" in r.stdout, r.stderr
    return rec


def by_id(diagnosis):
    return {f["id"]: f for f in diagnosis["findings"]}


def test_a_slow_checkpoint_every_50_steps_is_step_pauses(tmp_path):
    found = by_id(doctor(record(tmp_path, 400, "--pause-every", 50, "--pause-s", 0.3)))
    pauses = found.get("step_pauses")
    assert pauses is not None, found.keys()
    assert pauses["evidence"]["period_steps"] == 50, pauses
    assert pauses["evidence"]["where"] == "step_body", pauses
    assert pauses["evidence"]["pause_share"] > 0.5, pauses
    assert "hang" not in found, found["hang"]


def test_a_loader_that_stalls_every_50th_batch_is_told_from_one_slow_on_every_batch(tmp_path):
    few = by_id(doctor(record(tmp_path, 400, "--slow-batch-every", 50, "--slow-batch-s", 0.3)))
    stall = few.get("data_loader_stall")
    assert stall is not None, few.keys()
    assert "a few long waits" in stall["summary"], stall
    assert "prefetch the next shard" in stall["advice"], stall
    assert "step_pauses" not in few, few["step_pauses"]  # one finding for one problem
    every = by_id(doctor(record(tmp_path, 200, "--batch-s", 0.01, name="every")))
    stall = every.get("data_loader_stall")
    assert stall is not None, every.keys()
    assert "every step waits" in stall["summary"], stall
    assert "num_workers" in stall["advice"] and "pin_memory" not in stall["advice"], stall


def test_a_hang_ended_with_ctrl_c_is_a_hang(tmp_path):
    rec = tmp_path / "hung.gpumon"
    proc = subprocess.Popen([BINARY, "record", "-o", str(rec), "--interval", "100", "--",
                             sys.executable, SCRIPT, "300", "--hang-after", "300"],
                            env=base_env(tmp_path), stdout=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        assert proc.stdout.readline().strip() == "hung"
        # The silence itself is the planted problem: past the 20 s a stopped rank needs.
        time.sleep(22)
        os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C in its terminal sends
        proc.wait(TIMEOUT_S)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    d = doctor(rec)
    found = by_id(d)
    hang = found.get("hang")
    assert hang is not None and hang["severity"] == "critical", d
    assert hang["evidence"]["gap_s"] >= 21, hang
    assert "KeyboardInterrupt" in hang["summary"] or "SIGINT" in hang["summary"], hang
    assert found["run_interrupted"]["deduction"] == 0, found["run_interrupted"]
    assert "run_failed" not in found, found["run_failed"]
    assert d["health_score"] < 100


def test_gpumon_started_before_torch_is_a_cpu_run_not_the_idle_gpu(tmp_path):
    rec = record(tmp_path, 300, "--start-before-torch")
    steps = subprocess.check_output(
        [BINARY, "export", str(rec), "--steps", "--format", "jsonl"], text=True)
    events = subprocess.check_output(
        [BINARY, "export", str(rec), "--table", "rank_events", "--format", "jsonl"], text=True)
    devices = [json.loads(line)["detail"].get("device") for line in events.splitlines()
               if '"device"' in line and json.loads(line)["kind"] == "device"]
    assert devices == ["cpu"], events
    assert steps.count('"step"') >= 300, steps[:500]
    d = doctor(rec)
    found = by_id(d)
    assert "launch_bound" not in found, found["launch_bound"]
    for f in d["findings"]:  # the demo's GPUs are the machine's, not this CPU run's
        if f["gpus"]:
            assert f["scope"] == "machine" and f["deduction"] == 0, f
        assert "GPU faster" not in f["advice"] and "NCCL" not in f["advice"], f
    assert any("CPU" in n["reason"] for n in d["not_judged"]), d["not_judged"]
