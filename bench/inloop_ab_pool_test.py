# SPDX-License-Identifier: MIT
"""inloop_ab.py --pool: the pairs of several runs of one setup, pooled (no GPU needed)."""
import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SETUP = {"loop": "launch", "arm": "gpumon", "steps_per_half": 10, "cpus": "2-5",
         "agent_cpus": "any"}


def run_file(tmp_path, name, wall, **changes):
    path = tmp_path / name
    path.write_text(json.dumps(dict(SETUP, seconds=10.0, wall_ratios=wall,
                                    cpu_ratios=[1.0] * len(wall), **changes)))
    return str(path)


def pool(*paths):
    return subprocess.run([sys.executable, os.path.join(HERE, "inloop_ab.py"), "--pool", *paths],
                          capture_output=True, text=True, timeout=60)


def test_pooling_two_runs_gives_the_figures_over_all_their_pairs(tmp_path):
    a = run_file(tmp_path, "a.json", [1.01] * 30)
    b = run_file(tmp_path, "b.json", [1.03] * 31)
    r = pool(a, b)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["pairs"] == 61 and out["seconds"] == 20.0 and out["pooled"] == [a, b]
    assert out["slowdown_pct_median"] == pytest.approx(3.0)  # 31 of the 61 pairs read 1.03
    assert out["slowdown_pct_mean"] == pytest.approx(100 * (30 * 0.01 + 31 * 0.03) / 61)
    assert out["main_thread_cpu_slowdown_pct"]["median"] == pytest.approx(0.0)
    assert {k: out[k] for k in SETUP} == SETUP


def test_runs_of_different_setups_or_without_ratios_are_refused(tmp_path):
    a = run_file(tmp_path, "a.json", [1.0] * 5)
    b = run_file(tmp_path, "b.json", [1.0] * 5, steps_per_half=40)
    r = pool(a, b)
    assert r.returncode != 0 and "not one setup" in r.stderr
    old = tmp_path / "old.json"
    old.write_text(json.dumps(dict(SETUP, seconds=1.0)))
    r = pool(a, str(old))
    assert r.returncode != 0 and "no wall_ratios" in r.stderr and "old.json" in r.stderr
