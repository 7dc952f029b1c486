# SPDX-License-Identifier: MIT
"""CPU cost of gpumon's three lines per training step (target: <= 10 us median).

Runs blocks of CALLS steps of an empty loop over pre-made batches, with and without gpumon
(`for b in mon.wrap(batches): mon.step()`), connected to a real agent (GPUMON_AGENT_SOCKET or
the default one, started when absent), and reports the extra CPU time per step (thread CPU time,
so the agent's own work is not counted; wall time too). The arms alternate within each block.
Also times one torch.cuda.memory_stats() call (the seed's per-sample cost) and the arms:
  gpumon           the default: CUDA events around every step, allocator stats at 1 Hz
  gpumon-no-events the same without the CUDA events (what a CPU run or gpu_timer=None costs)
  gpumon-with      `with mon.step():` instead of the plain call
Then the calls made at a bounded rate, one at a time (housekeeping: handing the queued steps to
the client, every second; a CUDA event's record and read, once per gpu_interval_s).
Each step sleeps --pace-us (in every arm, so it cancels out): an unpaced loop sends 200 000
messages a second, more than any training does, and fills the client's bounded queue.
usage: step_cost.py [--calls N] [--blocks B] [--pace-us U] [--device cuda|cpu] [--out FILE.json]
"""
import argparse
import os
import statistics
import sys
import time
import warnings

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_agent import emit  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import gpumon  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("--calls", type=int, default=3000)
p.add_argument("--pace-us", type=float, default=300.0,
               help="sleep between steps, so the agent keeps up as with real steps")
p.add_argument("--blocks", type=int, default=15)
p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
p.add_argument("--out", default=None)
a = p.parse_args()

if a.device == "cuda":
    torch.cuda.set_device(0)
    torch.zeros(1, device="cuda")  # CUDA context before gpumon.start() reads the device
warnings.simplefilter("always")
mon = gpumon.start()
if not mon.active:
    sys.exit("gpumon is not active (no agent, no _gpumon module): nothing to measure")
events = mon._gpu_timer
batches = [torch.zeros(4) for _ in range(a.calls)]


pace = a.pace_us / 1e6
sleep = time.sleep


def bare():
    for b in batches:
        sleep(pace)


def plain():
    for b in mon.wrap(batches):
        sleep(pace)
        mon.step()


def with_form():
    for b in mon.wrap(batches):
        with mon.step():
            sleep(pace)


def no_events():
    mon._configure(gpu_timer=None)
    try:
        plain()
    finally:
        mon._configure(gpu_timer=events)


def timed(fn):
    c0, w0 = time.thread_time_ns(), time.perf_counter_ns()
    fn()
    return (time.thread_time_ns() - c0) / a.calls / 1000, (time.perf_counter_ns() - w0) / a.calls / 1000


arms = {"bare": bare, "gpumon": plain, "gpumon-with": with_form}
if events is not None:
    arms["gpumon-no-events"] = no_events
res = {k: {"cpu_us": [], "wall_us": []} for k in arms}
for block in range(a.blocks):
    order = list(arms)
    order = order[block % len(order):] + order[:block % len(order)]
    for name in order:
        cpu, wall = timed(arms[name])
        res[name]["cpu_us"].append(cpu)
        res[name]["wall_us"].append(wall)
    mon.flush()
mem_us = None
if a.device == "cuda":
    n = 2000
    c0 = time.thread_time_ns()
    for _ in range(n):
        torch.cuda.memory_stats(0)
    mem_us = (time.thread_time_ns() - c0) / n / 1000


def paced_cost(fn, n=300):
    """Median thread CPU of one fn() call, each after a pace sleep (cold, as in a loop)."""
    costs = []
    for _ in range(n):
        sleep(pace)
        c0 = time.thread_time_ns()
        fn()
        costs.append((time.thread_time_ns() - c0) / 1000)
    return statistics.median(costs)


# What the calls at a bounded rate cost (each at most once per interval, not per step).
components = {"housekeeping": paced_cost(mon._housekeeping)}
if events is not None:
    slots = [events.record(), events.record()]
    torch.cuda.synchronize()
    components["gpu_event_record"] = paced_cost(events.record)
    components["gpu_event_elapsed"] = paced_cost(lambda: events.elapsed(*slots))
    components["memory_stats"] = paced_cost(lambda: torch.cuda.memory_stats(0))
bare_cpu = statistics.median(res["bare"]["cpu_us"])
out = {"device": a.device, "torch": torch.__version__, "calls_per_block": a.calls,
       "blocks": a.blocks, "memory_stats_cpu_us": mem_us, "client": mon.stats(),
       "bounded_rate_calls_cpu_us": components, "arms": {}}
for name, r in res.items():
    extra = [c - b for c, b in zip(r["cpu_us"], res["bare"]["cpu_us"])]
    out["arms"][name] = {
        "cpu_us_median": statistics.median(r["cpu_us"]),
        "extra_cpu_us_median": statistics.median(extra),
        "extra_cpu_us_min": min(extra), "extra_cpu_us_max": max(extra),
        "wall_us_median": statistics.median(r["wall_us"]),
    }
mon.close()
emit(out, a.out)
