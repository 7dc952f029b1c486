# SPDX-License-Identifier: MIT
"""The zero-code hooks (gpumon/_auto.py): a script that never mentions gpumon, run under
`gpumon record`, sends the same steps as its twin with gpumon's three lines; it computes exactly
what it computes without gpumon; a script that starts gpumon itself is counted once; a failure
inside the hooks costs one warning, never the training."""
import json
import os
import subprocess
import sys

import pytest

from test_gpumon import BINARY, HERE, base_env

torch = pytest.importorskip("torch")
SCRIPT = os.path.join(HERE, "auto_train.py")


def record(tmp_path, *args, name="run", extra=(), env=None, python=(sys.executable, SCRIPT)):
    """Runs `gpumon record -- python auto_train.py ARGS`; (the recording's steps, stdout, stderr)."""
    rec = tmp_path / (name + ".gpumon")
    r = subprocess.run([BINARY, "record", "-o", str(rec), "--interval", "100", *extra, "--",
                        *python, *[str(x) for x in args]],
                       env=env or base_env(tmp_path), capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    out = subprocess.check_output([BINARY, "export", str(rec), "--steps", "--format", "jsonl"],
                                  text=True)
    return [json.loads(line) for line in out.splitlines()], r.stdout, r.stderr, rec


def wait_share(steps):
    return sum(s["data_wait_s"] for s in steps) / sum(s["cpu_step_s"] for s in steps)


def finding_ids(rec):
    r = subprocess.run([BINARY, "doctor", str(rec), "--json"], capture_output=True, text=True)
    return sorted({f["id"] for f in json.loads(r.stdout)["findings"]})


def test_an_unchanged_script_sends_what_its_instrumented_twin_sends(tmp_path):
    bare, out, err, bare_rec = record(tmp_path, 48, "--item-sleep", 0.01, name="bare")
    twin, _, _, twin_rec = record(tmp_path, 48, "--item-sleep", 0.01, "--explicit", name="twin")
    assert "done 48" in out
    assert len(bare) == len(twin) == 48, err
    assert [s["step"] for s in bare] == list(range(48))
    assert bare[0]["device"] == "cpu"
    # Each batch waits 2 x 10 ms for its samples; the step itself is tiny: both mostly wait.
    assert abs(wait_share(bare) - wait_share(twin)) < 0.10, (wait_share(bare), wait_share(twin))
    assert wait_share(bare) > 0.5
    assert finding_ids(bare_rec) == finding_ids(twin_rec)
    assert "data_loader_stall" in finding_ids(bare_rec)


@pytest.mark.parametrize("style", ["lightning", "hf"])
def test_trainer_shaped_loops_send_what_their_twins_send(tmp_path, style):
    args = (30, "--item-sleep", 0.005, "--style", style, "--accum", 2, "--val-every", 10)
    bare, out, err, bare_rec = record(tmp_path, *args, name="bare")
    twin, _, _, twin_rec = record(tmp_path, *args, "--explicit", name="twin")
    assert "done 30" in out, out + err
    assert len(bare) == len(twin) == 30
    assert abs(wait_share(bare) - wait_share(twin)) < 0.10, (wait_share(bare), wait_share(twin))
    assert finding_ids(bare_rec) == finding_ids(twin_rec)


def test_gradient_accumulation_and_two_optimizers_count_one_step_per_update(tmp_path):
    steps, out, _, _ = record(tmp_path, 6, "--accum", 4, "--two-optimizers", "--val-every", 2)
    assert "done 6" in out
    assert len(steps) == 6


def test_a_script_that_starts_gpumon_itself_is_counted_once(tmp_path):
    steps, out, _, _ = record(tmp_path, 8, "--explicit", name="early")
    assert len(steps) == 8 and "done 8" in out
    # The hooks made their Monitor at the first batch; gpumon.start() then hands it over.
    steps, out, err, _ = record(tmp_path, 8, "--explicit-late", name="late")
    assert len(steps) == 8 and "done 8" in out, err
    assert [s["step"] for s in steps] == list(range(8))


def test_training_computes_exactly_the_same_with_the_hooks(tmp_path):
    plain = subprocess.run([sys.executable, SCRIPT, "10", "--accum", "2", "--print-weights"],
                           env=base_env(tmp_path), capture_output=True, text=True, timeout=300)
    assert plain.returncode == 0, plain.stderr
    steps, hooked, _, _ = record(tmp_path, 10, "--accum", 2, "--print-weights")
    assert len(steps) == 10
    assert hooked == plain.stdout


def test_the_script_s_own_patches_of_the_same_functions_keep_working(tmp_path):
    steps, out, _, _ = record(tmp_path, 5, "--own-patches")
    assert "own patches 5 " in out, out
    assert len(steps) == 5


def test_an_uncaught_exception_is_recorded_and_is_a_run_failed_finding(tmp_path):
    rec = tmp_path / "raised.gpumon"
    r = subprocess.run([BINARY, "record", "-o", str(rec), "--interval", "100", "--",
                        sys.executable, SCRIPT, "10", "--raise-at", "4"],
                       env=base_env(tmp_path), capture_output=True, text=True, timeout=300)
    assert r.returncode == 1 and "planted failure after step 4" in r.stderr, r.stderr
    events = subprocess.check_output(
        [BINARY, "export", str(rec), "--table", "rank_events", "--format", "jsonl"], text=True)
    errors = [json.loads(line) for line in events.splitlines() if '"error"' in line]
    assert len(errors) == 1, events
    detail = errors[0]["detail"]
    assert detail["exception"] == "RuntimeError" and detail["step"] == 4, detail
    assert detail["where"].startswith("auto_train.py:"), detail
    doctor = subprocess.run([BINARY, "doctor", str(rec), "--json"], capture_output=True,
                            text=True)
    failed = [f for f in json.loads(doctor.stdout)["findings"] if f["id"] == "run_failed"]
    assert len(failed) == 1, doctor.stdout
    assert "exited with status 1" in failed[0]["summary"], failed[0]
    assert "raised RuntimeError: planted failure after step 4" in failed[0]["summary"], failed[0]


def test_no_python_hooks_turns_them_off(tmp_path):
    steps, out, _, _ = record(tmp_path, 5, extra=("--no-python-hooks",))
    assert "done 5" in out and steps == []


def test_a_failure_inside_the_hooks_is_one_warning_and_training_goes_on(tmp_path):
    broken = tmp_path / "broken.py"
    broken.write_text(
        "import runpy, sys, warnings\n"
        "warnings.simplefilter('always')\n"
        "import gpumon._monitor as m\n"
        "class Broken:\n"
        "    active = True\n"
        "    def __getattr__(self, name):\n"
        "        raise RuntimeError('broken on purpose')\n"
        "m._start_auto = lambda: Broken()\n"
        "sys.argv = [%r, '6']\n"
        "runpy.run_path(%r, run_name='__main__')\n" % (SCRIPT, SCRIPT))
    steps, out, err, _ = record(tmp_path, python=(sys.executable, str(broken)))
    assert "done 6" in out
    assert err.count("step hooks off after an error") == 1, err
    assert steps == []


def test_python_without_torch_and_other_commands_run_as_before(tmp_path):
    plain = tmp_path / "plain.py"
    plain.write_text("import sys\nprint('plain', 'torch' in sys.modules)\n")
    steps, out, err, _ = record(tmp_path, python=(sys.executable, str(plain)))
    assert out == "plain False\n"
    assert "hooks" not in err and "Warning" not in err, err
    steps, out, _, _ = record(tmp_path, "hello", name="echo", python=("/bin/echo",))
    assert out == "hello\n"


def test_python_m_gpumon_runs_a_script_with_the_hooks(tmp_path):
    from test_gpumon import Agent
    agent = Agent(tmp_path)
    try:
        env = base_env(tmp_path)
        env["GPUMON_AGENT_SOCKET"] = agent.sock
        r = subprocess.run([sys.executable, "-m", "gpumon", SCRIPT, "4"], env=env,
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0 and "done 4" in r.stdout, r.stdout + r.stderr
    finally:
        from test_callbacks import stop_after_byes
        stop_after_byes(agent)
    assert len(agent.steps()) == 4


def test_every_rank_a_launcher_starts_is_instrumented(tmp_path):
    # Two gloo ranks started by a shell script the way torchrun starts them (Debian's torch
    # 1.13 torchrun fails before it starts any rank on these machines).
    if not torch.distributed.is_available():
        pytest.skip("this torch has no torch.distributed")
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    launcher = tmp_path / "launch.sh"
    launcher.write_text(
        "export WORLD_SIZE=2 LOCAL_WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=%d "
        "OMP_NUM_THREADS=1\n"
        "RANK=0 LOCAL_RANK=0 %s %s 5 --ddp &\n"
        "RANK=1 LOCAL_RANK=1 %s %s 5 --ddp\n"
        "wait\n" % (port, sys.executable, SCRIPT, sys.executable, SCRIPT))
    steps, out, err, _ = record(tmp_path, python=("/bin/sh", str(launcher)))
    assert out.count("done 5") == 2, out + err
    assert sorted(s["rank"] for s in steps) == [0] * 5 + [1] * 5
