# SPDX-License-Identifier: MIT
"""bench/inloop_ab.py without a GPU: its arms on the launch loop's model on the CPU (--loop cpu)
against a real agent on the fake NVML, and --pool."""
import json
import os
import random
import statistics
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SETUP = {"loop": "launch", "arm": "gpumon", "steps_per_half": 10, "cpus": "2-5",
         "agent_cpus": "any"}


def run_file(tmp_path, name, wall, **changes):
    path = tmp_path / name
    path.write_text(json.dumps(dict(SETUP, seconds=10.0, wall_ratios=wall,
                                    slowdown_pct_median=100 * (statistics.median(wall) - 1),
                                    cpu_ratios=[1.0] * len(wall), **changes)))
    return str(path)


def inloop_ab(*args, env=None):
    return subprocess.run([sys.executable, os.path.join(HERE, "inloop_ab.py"), *args],
                          capture_output=True, text=True, timeout=600, env=env)


def pool(*paths):
    return inloop_ab("--pool", *paths)


@pytest.mark.parametrize("args,arm,sent", [
    ([], "gpumon", 17),  # 3 warm-up and 6 measured pairs of 2 steps; the last one is deferred
    (["--arm", "inert"], "inert", 0),
    (["--oom-steps", "1", "--hand-over-s", "0.05"], "gpumon-oom-steps-1-hand-over-0.05s", 17),
    (["--loop", "dispatch"], "gpumon", 17),
    (["--baseline", "none"], "gpumon", 17),
])
def test_each_arm_runs_and_reports_its_pairs(tmp_path, args, arm, sent):
    binary = os.environ.get("GPUMON_TEST_BINARY")
    fake_nvml = os.environ.get("GPUMON_TEST_FAKE_NVML")
    if not binary or not fake_nvml:
        pytest.skip("needs GPUMON_TEST_BINARY and GPUMON_TEST_FAKE_NVML (ctest sets them)")
    out = tmp_path / "ab.json"
    r = inloop_ab("--gpumon", binary, "--loop", "cpu", "--layers", "8", "--pairs", "6",
                  "--steps", "2", "--out", str(out), *args,
                  env=dict(os.environ, GPUMON_NVML_LIBRARY=fake_nvml))
    assert r.returncode == 0, r.stdout + r.stderr
    d = json.loads(out.read_text())
    assert d["arm"] == arm and d["pairs"] == 6 and len(d["wall_ratios"]) == 6
    assert d["layers"] == 8
    assert d["baseline"] == ("none" if "none" in args else "fetch")
    assert all(x > 0 for x in d["wall_ratios"] + d["cpu_ratios"])
    assert len(d["wall_on_s"]) == len(d["wall_off_s"]) == 6
    on, off = sum(d["wall_on_s"]), sum(d["wall_off_s"])
    assert d["slowdown_pct_total"] == pytest.approx(100 * (on / off - 1), abs=1e-3)
    lo, hi = d["slowdown_pct_total_ci95"]
    assert lo <= d["slowdown_pct_total"] <= hi
    assert d["client"]["sent"] == sent and d["client"]["dropped"] == 0


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
    runs = out["between_runs"]  # the two runs' medians, 1 % and 3 %: mean 2 %, t(1) = 12.71
    assert runs["run_medians_pct"] == pytest.approx([1.0, 3.0])
    assert runs["mean_pct"] == pytest.approx(2.0)
    assert runs["mean_ci95"] == pytest.approx([2.0 - 12.71, 2.0 + 12.71])
    assert {k: out[k] for k in SETUP} == SETUP


def test_pooled_totals_weigh_each_pair_by_its_time_and_need_every_run_timed(tmp_path):
    # A run with one slow half in ten: the median of ratios misses it, the total counts it.
    on = [0.05] * 9 + [0.10]
    a = run_file(tmp_path, "a.json", [x / 0.05 for x in on], wall_on_s=on, wall_off_s=[0.05] * 10)
    b = run_file(tmp_path, "b.json", [1.0] * 10, wall_on_s=[0.05] * 10, wall_off_s=[0.05] * 10)
    out = json.loads(pool(a, b).stdout)
    assert out["slowdown_pct_median"] == pytest.approx(0.0)
    assert out["slowdown_pct_total"] == pytest.approx(100 * 0.05 / 1.0)  # 1.05 s against 1.00 s
    untimed = run_file(tmp_path, "untimed.json", [1.0] * 10)
    assert "slowdown_pct_total" not in json.loads(pool(a, untimed).stdout)


def test_median_check_shows_small_planted_costs_moving_the_median_by_their_mean(tmp_path):
    # A no-cost run whose halves vary by a few %, like the launch loop's.
    rng = random.Random(7)
    run = run_file(tmp_path, "inert.json", [rng.gauss(1.0, 0.04) for _ in range(4000)])
    r = inloop_ab("--median-check", run)
    assert r.returncode == 0, r.stderr
    rows = {(x["share_of_halves"], x["extra_pct"]): x for x in json.loads(r.stdout)["planted"]}
    small = rows[(0.5, 0.5)]  # half the halves 0.5 % slower: 0.25 % on average
    assert small["cost_planted_pct"] == pytest.approx(0.25)
    assert small["median_moves_pct"] == pytest.approx(0.25, abs=0.05)
    rare = rows[(0.01, 20.0)]  # a 20 % stall in 1 % of the halves: the median misses most of it
    assert rare["median_moves_pct"] < 0.5 * rare["cost_planted_pct"]
    summary = tmp_path / "pooled.json"  # --pool's output keeps no ratios
    summary.write_text(json.dumps(json.loads(pool(run, run).stdout)))
    r = inloop_ab("--median-check", str(summary))
    assert r.returncode != 0 and "no wall_ratios" in r.stderr and "Traceback" not in r.stderr


def test_runs_of_different_setups_or_without_ratios_are_refused(tmp_path):
    a = run_file(tmp_path, "a.json", [1.0] * 5)
    b = run_file(tmp_path, "b.json", [1.0] * 5, steps_per_half=40)
    r = pool(a, b)
    assert r.returncode != 0 and "not one setup" in r.stderr
    # A run from before --layers had the launch loop's 24 layers: it pools with those only.
    assert pool(a, run_file(tmp_path, "l24.json", [1.0] * 5, layers=24)).returncode == 0
    r = pool(a, run_file(tmp_path, "l8.json", [1.0] * 5, layers=8))
    assert r.returncode != 0 and "not one setup" in r.stderr
    # A run from before --baseline fetched nothing in its without-half: it pools with those only.
    assert pool(a, run_file(tmp_path, "none.json", [1.0] * 5, baseline="none")).returncode == 0
    r = pool(a, run_file(tmp_path, "fetch.json", [1.0] * 5, baseline="fetch"))
    assert r.returncode != 0 and "not one setup" in r.stderr
    old = tmp_path / "old.json"
    old.write_text(json.dumps(dict(SETUP, seconds=1.0)))
    r = pool(a, str(old))
    assert r.returncode != 0 and "no wall_ratios" in r.stderr and "old.json" in r.stderr
