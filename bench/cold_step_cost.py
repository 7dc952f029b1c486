# SPDX-License-Identifier: MIT
"""CPU cost of gpumon's per-step calls when they are cold, as in a real training loop.

bench/step_cost.py times the calls in a paced loop where they stay warm (3.7 us a step on the
H200). In training, a step's work (hundreds of kernel launches) evicts gpumon's code and data
from the caches and TLBs between two calls, and then each call costs more: that is what the
launch loop's A/B (bench/inloop_ab.py) pays. Here each call is followed by a sweep over
--sweep-mb of memory (a torch CPU tensor), so the next one finds the caches cold, and is timed
in thread CPU time against a plain next() over the same kind of iterator, interleaved:

  gpumon   next(iter(mon.wrap(itertools.repeat(None)))) then mon.step()
  inert    the same two calls on a second Monitor whose clock is switched off (as after an
           internal error): what calling them costs, without the clock's work
  plain    next(itertools.repeat(None))

The extra cost is the difference of the medians (and of the means of the fastest 90 %); the
clock's own share is gpumon's less inert's. One `gpumon agent` (on --agent-cpu) receives the
steps. Runs on a CPU-only machine.
usage: cold_step_cost.py --gpumon PATH [--reps N] [--sweep-mb M] [--cpu C] [--agent-cpu A]
                         [--out FILE.json]
"""
import argparse
import itertools
import os
import statistics
import sys
import tempfile
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench_agent import Agent, emit  # noqa: E402

sys.path.insert(0, os.path.join(HERE, "..", "python"))


def trimmed_mean(values, keep=0.9):
    ordered = sorted(values)
    return statistics.fmean(ordered[:max(1, int(len(ordered) * keep))])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpumon", required=True)
    ap.add_argument("--reps", type=int, default=1500)
    ap.add_argument("--sweep-mb", type=int, default=64)
    ap.add_argument("--cpu", type=int, default=0, help="the CPU the timed loop runs on")
    ap.add_argument("--agent-cpu", type=int, default=1)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    torch.set_num_threads(1)
    work = tempfile.mkdtemp(prefix="gpumon-cold-")
    sock = os.path.join(work, "agent.sock")
    agent = Agent([a.gpumon, "agent", "--socket", sock, "-o", os.path.join(work, "cold.gpumon"),
                   "--interval", "100"], sock, cpus={a.agent_cpu})
    os.sched_setaffinity(0, {a.cpu})
    import gpumon
    with agent.monitor() as mon:
        sweep = torch.zeros(a.sweep_mb * 1024 * 1024 // 4)
        wrapped = iter(mon.wrap(itertools.repeat(None)))
        plain = itertools.repeat(None)
        step = mon.step
        off = gpumon.start(socket_path=sock, start_agent=False)
        off._clock.switch_off()  # the calls stay; they only check the switch
        off_wrapped = iter(off.wrap(itertools.repeat(None)))
        off_step = off.step

        def with_gpumon():
            next(wrapped)
            step()

        def inert():
            next(off_wrapped)
            off_step()

        def without():
            next(plain)

        arms = {"gpumon": with_gpumon, "inert": inert, "plain": without}
        ns = {name: [] for name in arms}
        clock = time.thread_time_ns
        for _ in range(a.reps):
            for name, call in arms.items():
                t = clock()
                call()
                ns[name].append(clock() - t)
                sweep.add_(1.0)  # evicts the caches before the next call
        med = {k: statistics.median(v) / 1e3 for k, v in ns.items()}
        trim = {k: trimmed_mean(v) / 1e3 for k, v in ns.items()}
        out = {"reps": a.reps, "sweep_mb": a.sweep_mb,
               "cold_us_median": med, "cold_us_trimmed_mean": trim,
               "extra_cold_us_median": med["gpumon"] - med["plain"],
               "extra_cold_us_trimmed_mean": trim["gpumon"] - trim["plain"],
               "calls_cold_us_median": med["inert"] - med["plain"],
               "clock_cold_us_median": med["gpumon"] - med["inert"],
               "client": mon.stats()}
        off.close()
    emit(out, a.out)


if __name__ == "__main__":
    main()
