# SPDX-License-Identifier: MIT
"""Slowdown from gpumon's calls in the training loop, by fine-grained A/B (../shared/MEASURING.md).

On a shared host a launch-bound loop's step time drifts by +-10 % within minutes, so arms a few
seconds apart (bench/training_overhead.py) cannot resolve 0.5 %. Here one `gpumon agent`
(10 Hz, recording) and one Monitor run throughout, and the loop alternates runs of --steps
steps with the three lines (`for b in mon.wrap(loader): ... mon.step()`) and without them, the
order of each pair random; the slowdown is the median over pairs of (mean step with) / (mean
step without) - 1, with a 95 % bootstrap interval (the mean of the ratios is given too: it
counts in full the few halves that hold one of gpumon's bounded-rate reads). The drift cancels within each pair (about
0.1-0.5 s). What this leaves out is the agent's own effect, which is present in both halves:
that is training_overhead.py's gpumon arms (its own process, another core).

usage: inloop_ab.py --gpumon PATH --loop gemm|launch [--pairs N] [--steps K] [--cpus 2-5]
                    [--max-seconds S] [--out FILE.json]
"""
import argparse
import itertools
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from training_overhead import bootstrap_ci, make_loop  # noqa: E402

sys.path.insert(0, os.path.join(HERE, "..", "python"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpumon", required=True)
    ap.add_argument("--loop", choices=["gemm", "launch"], required=True)
    ap.add_argument("--pairs", type=int, default=200)
    ap.add_argument("--steps", type=int, default=40, help="steps in each half of a pair")
    ap.add_argument("--max-seconds", type=float, default=0,
                    help="stop making pairs after this long (0: no limit)")
    ap.add_argument("--cpus", default="", help="pin the training process to these CPUs, e.g. 2-5")
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    if a.cpus:
        lo, _, hi = a.cpus.partition("-")
        os.sched_setaffinity(0, set(range(int(lo), int(hi or lo) + 1)))
    work = tempfile.mkdtemp(prefix="gpumon-ab-")
    sock = os.path.join(work, "agent.sock")
    log = open(os.path.join(work, "agent.log"), "w+")
    agent = subprocess.Popen([a.gpumon, "agent", "--socket", sock, "-o",
                              os.path.join(work, "ab.gpumon"), "--interval", "100"],
                             stdout=subprocess.DEVNULL, stderr=log)
    try:
        deadline = time.time() + 10
        while not os.path.exists(sock) and time.time() < deadline and agent.poll() is None:
            time.sleep(0.05)
        if not os.path.exists(sock):
            log.seek(0)
            sys.exit("the agent did not listen: " + log.read()[-500:])
        import gpumon
        mon = gpumon.start(socket_path=sock, start_agent=False)
        if not mon.active:
            sys.exit("gpumon is not active: nothing to measure")
        step = make_loop(a.loop)
        batches = iter(mon.wrap(itertools.repeat(None)))
        perf = time.perf_counter

        def with_gpumon():
            t = perf()
            for _ in range(a.steps):
                next(batches)
                step()
                mon.step()
            return (perf() - t) / a.steps

        def without():
            t = perf()
            for _ in range(a.steps):
                step()
            return (perf() - t) / a.steps

        for _ in range(3):  # warm up both paths
            with_gpumon(), without()
        rng = random.Random(1)
        ratios, on_ms, off_ms = [], [], []
        t0 = perf()
        stop_at = t0 + a.max_seconds if a.max_seconds > 0 else float("inf")
        for _ in range(a.pairs):
            if perf() > stop_at:
                break
            if rng.random() < 0.5:
                on, off = with_gpumon(), without()
            else:
                off, on = without(), with_gpumon()
            ratios.append(on / off)
            on_ms.append(on * 1e3)
            off_ms.append(off * 1e3)
        lo, hi = bootstrap_ci(ratios)
        mlo, mhi = bootstrap_ci(ratios, stat=statistics.fmean)
        out = {"loop": a.loop, "pairs": len(ratios), "steps_per_half": a.steps, "cpus": a.cpus,
               "seconds": round(perf() - t0, 1),
               "slowdown_pct_median": 100 * (statistics.median(ratios) - 1),
               "slowdown_pct_ci95": [100 * (lo - 1), 100 * (hi - 1)],
               # the mean counts the rare halves that hold a bounded-rate read in full
               "slowdown_pct_mean": 100 * (statistics.fmean(ratios) - 1),
               "slowdown_pct_mean_ci95": [100 * (mlo - 1), 100 * (mhi - 1)],
               "step_ms_with_median": statistics.median(on_ms),
               "step_ms_without_median": statistics.median(off_ms),
               "client": mon.stats()}
        mon.close()
    finally:
        agent.terminate()
        agent.wait(10)
    text = json.dumps(out, indent=1)
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
