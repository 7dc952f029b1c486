# SPDX-License-Identifier: MIT
"""Labelled host-side cases (host memory leaks, CPU stragglers), recorded for real by `gpumon record` on the fake NVML:
a CPU run whose Dataset leaks host memory in its DataLoader workers must be a host_memory_leak
for `gpumon doctor`, the same run without the leak must not; and in a 2-rank gloo DDP run where
rank 1 does 3x the compute (the all-reduce makes the step times equal), cpu_straggler must name
rank 1. The scripts run until enough steps and seconds are done and, where a finding is expected, until
the live diagnoser has pushed it to them: no wall-clock margin here."""
import json
import os
import subprocess
import sys

import pytest

from test_gpumon import BINARY, HERE, base_env

torch = pytest.importorskip("torch")
SCRIPT = os.path.join(HERE, "host_train.py")


def doctor(tmp_path, name, *args):
    rec = tmp_path / (name + ".gpumon")
    env = base_env(tmp_path)
    env["OMP_NUM_THREADS"] = "1"
    r = subprocess.run([BINARY, "record", "-o", str(rec), "--interval", "200", "--",
                        sys.executable, SCRIPT, *[str(a) for a in args]],
                       env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    samples = subprocess.check_output(
        [BINARY, "export", str(rec), "--table", "process_samples", "--format", "jsonl"], text=True)
    rows = [json.loads(line) for line in samples.splitlines()]
    assert rows and all(r["pss_bytes"] > 0 and r["cpu_s"] >= 0 for r in rows), rows[:3]
    d = subprocess.run([BINARY, "doctor", str(rec), "--json"], capture_output=True, text=True)
    return {f["id"]: f for f in json.loads(d.stdout)["findings"]}, r.stdout + r.stderr


def test_a_dataset_leaking_in_its_workers_is_a_host_memory_leak(tmp_path):
    findings, log = doctor(tmp_path, "leak", "--leak-mb", 5, "--workers", 2,
                           "--until-finding", "host_memory_leak")
    assert "host_memory_leak" in findings, sorted(findings)
    f = findings["host_memory_leak"]
    ev = f["evidence"]
    # ~5 MB per step at up to 10 steps a second, most of it in the workers.
    assert ev["pss_growth_bytes"] >= 256 * 2**20, ev
    assert ev["workers"] == 2 and ev["workers_pss_bytes"] > ev["first_pss_bytes"] / 4, ev
    assert ev["minutes_to_full"] > 0 and ev["limit"] in ("mem_available", "cgroup_limit"), ev
    assert "host_train: live finding host_memory_leak" in log, "pushed live to the process"


def test_the_same_run_without_the_leak_is_not_one(tmp_path):
    findings, _ = doctor(tmp_path, "healthy", "--workers", 2)
    assert "host_memory_leak" not in findings, findings.get("host_memory_leak")


def test_the_rank_doing_three_times_the_compute_is_the_cpu_straggler(tmp_path):
    if not torch.distributed.is_available():
        pytest.skip("this torch has no torch.distributed")
    findings, log = doctor(tmp_path, "ddp", "--nprocs", 2, "--heavy-rank", 1, "--heavy-factor", 3,
                         "--min-steps", 50, "--min-seconds", 16, "--until-finding", "cpu_straggler")
    assert "cpu_straggler" in findings, sorted(findings)
    f = findings["cpu_straggler"]
    assert f["ranks"] == [1], f
    # 3x the compute, but the other rank spins in gloo's all-reduce while it waits, and how much
    # depends on the machine's load (1.86 on a loaded 2-core VM): the rule's own ratio, 1.5.
    assert f["evidence"]["ratio_vs_others"] >= 1.5, f["evidence"]
    assert "straggler" not in findings, findings.get("straggler")
    assert log.count("host_train: live finding cpu_straggler") == 2, log
