# SPDX-License-Identifier: MIT
"""gpumon.lightning and gpumon.hf against stand-in trainers (fake_trainers.py) that call the
hooks in the real trainers' order, with a real `gpumon agent` on the fake NVML."""
import os
import subprocess
import sys
import warnings

import pytest

import fake_trainers
from test_gpumon import REPO, Agent, base_env

import gpumon

RANK_VARS = ("RANK", "LOCAL_RANK", "WORLD_SIZE")


def stop_after_byes(agent, count=1):
    assert agent.stop_after_byes(count) == 0


@pytest.fixture
def agent(tmp_path, monkeypatch):
    for name in RANK_VARS + ("GPUMON_AGENT_SOCKET",):
        monkeypatch.delenv(name, raising=False)
    a = Agent(tmp_path)
    yield a
    a.stop()


def check_recording(agent, count, pid_rank, fetch_s, step_s, spans):
    """`spans`: what the fake trainer measured around each step's hooks (fake_trainers.py)."""
    stop_after_byes(agent)
    steps = agent.steps()
    assert [s["step"] for s in steps] == list(range(count))
    assert len(spans) == count
    for s, span in zip(steps, spans):
        assert (s["pid"], s["rank"], s["local_rank"], s["world_size"]) == pid_rank
        assert step_s <= s["cpu_step_s"] <= span["body"], (s, span)  # the body only
        # The fetch before the step, not the validation / logging done in between.
        assert fetch_s <= s["data_wait_s"] <= span["gap"], (s, span)
    assert [e["kind"] for e in agent.rank_events()] == ["hello", "bye"]
    assert not any(name in os.environ for name in RANK_VARS)  # restored after the hello


def test_lightning_callback_sends_each_batch_with_the_fetch_as_data_wait(agent, monkeypatch):
    fake_trainers.install_lightning(monkeypatch)
    from gpumon.lightning import GpumonCallback
    cb = GpumonCallback(socket_path=agent.sock)
    spans = fake_trainers.lightning_fit([cb], batches=3, epochs=2, fetch_s=0.03, step_s=0.02,
                                        val_every=2, val_s=0.15, global_rank=1, local_rank=1,
                                        world_size=2)
    assert not cb.monitor.active  # closed at the end of training
    check_recording(agent, 6, (os.getpid(), 1, 1, 2), 0.03, 0.02, spans)


def test_hf_callback_sends_each_update_with_its_micro_batches_fetch(agent, monkeypatch):
    fake_trainers.install_transformers(monkeypatch)
    from gpumon.hf import GpumonCallback
    cb = GpumonCallback(socket_path=agent.sock)
    spans = fake_trainers.hf_train([cb], updates=5, fetch_s=0.015, step_s=0.02, grad_accum=2,
                                   log_every=1, log_s=0.15, process_index=3,
                                   local_process_index=0, world_size=4)
    assert not cb.monitor.active
    check_recording(agent, 5, (os.getpid(), 3, 0, 4), 0.03, 0.02, spans)


def test_the_environment_wins_over_the_trainer_and_a_given_monitor_stays_open(
        agent, monkeypatch):
    fake_trainers.install_lightning(monkeypatch)
    from gpumon.lightning import GpumonCallback
    monkeypatch.setenv("RANK", "5")
    mon = gpumon.start(socket_path=agent.sock)
    cb = GpumonCallback(mon)
    fake_trainers.lightning_fit([cb], batches=2, fetch_s=0, step_s=0, global_rank=0,
                                world_size=1)
    assert mon.active  # the user's monitor: the user closes it
    mon.close()
    stop_after_byes(agent)
    assert [(s["rank"], s["world_size"]) for s in agent.steps()] == [(5, None)] * 2


def test_hooks_never_raise(monkeypatch):
    fake_trainers.install_transformers(monkeypatch)
    from gpumon.hf import GpumonCallback
    inactive = GpumonCallback(gpumon.Monitor())  # no agent: every hook does nothing
    fake_trainers.hf_train([inactive], updates=2, fetch_s=0, step_s=0)

    class Broken(gpumon.Monitor):
        active = True

        def step(self):
            raise RuntimeError("boom")

    cb = GpumonCallback(Broken())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fake_trainers.hf_train([cb], updates=3, fetch_s=0, step_s=0)
    assert [str(w.message) for w in caught if w.category is gpumon.GpumonWarning] == [
        "gpumon: callback disabled after an internal error: RuntimeError('boom')"]
    with pytest.raises(TypeError, match="gpumon.Monitor"):
        GpumonCallback(object())


@pytest.mark.parametrize("module,names,package", [
    ("gpumon.lightning", ("lightning", "lightning.pytorch", "pytorch_lightning"),
     "pip install lightning"),
    ("gpumon.hf", ("transformers",), "pip install transformers"),
])
def test_a_missing_trainer_library_names_what_to_install(monkeypatch, module, names, package):
    for name in names:
        monkeypatch.setitem(sys.modules, name, None)  # import fails as if absent
    monkeypatch.delitem(sys.modules, module, raising=False)
    with pytest.raises(ImportError, match=package):
        __import__(module)


def test_import_gpumon_imports_no_trainer_library():
    code = ("import sys, gpumon; print(sorted({m.split('.')[0] for m in sys.modules} & "
            "{'lightning', 'pytorch_lightning', 'transformers', 'torch'}))")
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "python"))
    out = subprocess.check_output([sys.executable, "-c", code], env=env, text=True)
    assert out.strip() == "[]"


@pytest.mark.parametrize("example,package", [("train_lightning.py", "lightning.pytorch"),
                                             ("train_hf.py", "transformers")])
def test_the_real_trainer_sends_its_steps(agent, tmp_path, example, package):
    """Runs where the real library imports (the GPU machine: lightning 2.6, transformers 5)."""
    try:
        __import__(package)
    except ImportError:
        pytest.skip("%s is not installed" % package)
    env = base_env(tmp_path)
    env["GPUMON_AGENT_SOCKET"] = agent.sock
    r = subprocess.run([sys.executable, os.path.join(REPO, "examples", example), "--steps", "4",
                        "--device", "cpu"], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    stop_after_byes(agent)
    steps = agent.steps()
    assert [s["step"] for s in steps] == list(range(4)), r.stdout + r.stderr
    assert all(s["cpu_step_s"] > 0 and s["data_wait_s"] >= 0 for s in steps)
    assert [e["kind"] for e in agent.rank_events()] == ["hello", "bye"]
