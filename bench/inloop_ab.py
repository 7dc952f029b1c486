# SPDX-License-Identifier: MIT
"""Slowdown from gpumon's calls in the training loop, by fine-grained A/B (../shared/MEASURING.md).

On a shared host a launch-bound loop's step time drifts by +-10 % within minutes, so arms a few
seconds apart (bench/training_overhead.py) cannot resolve 0.5 %. Here one `gpumon agent`
(10 Hz, recording) and one Monitor run throughout, and the loop alternates runs of --steps
steps with the three lines (`for b in mon.wrap(loader): ... mon.step()`) and without them
(`for b in loader: ...`: the half without gpumon fetches from a plain iterator of the same
kind, since a loop without gpumon iterates its loader all the same; --baseline none leaves
that fetch out, as every run before this option did, which counted one next() call as
gpumon's), the order of each pair random; the slowdown is the median over pairs of (mean
step with) / (mean step without) - 1, with a 95 % bootstrap interval. The drift cancels within each pair (about
0.1-0.5 s). Also reported:
- the total with over the total without, less one (slowdown_pct_total), which counts every
  half in full, a rare stall too (the median counts small costs in full, even those only a few
  halves hold: --median-check shows it, below);
- the mean of the ratios, which also counts every half but reads high where there is nothing
  (a mean of ratios of noisy times exceeds 1: +0.3 % in the A/A control on the H200);
- the same ratios in the main thread's CPU time: wall slowdown beyond it is time the thread
  spent off the CPU (preempted, or waiting longer on the GPU);
- the agent's CPU time per step (--null-agent: a reader that discards the messages instead,
  which leaves the cost inside the training process alone). The agent handles the steps'
  messages while the loop runs, so where it runs matters: by default it may use any CPU (as
  when `gpumon.start()` or `gpumon record` starts it); --agent-cpus pins it, e.g. onto the
  training process's CPUs.
--arm control swaps gpumon's calls for the same number of empty Python calls (an A/A test of
the method: it should read ~0). --arm inert makes gpumon's own calls with its clock switched
off (as after an internal error): the cost of calling them, without their work (timing,
hand-over, bounded reads). --oom-steps and --hand-over-s change two parts of that work (the
ring of steps kept for the OOM bundle, the interval between hand-overs), to bisect its cost.
The ratios of every pair are kept in the output (wall_ratios, cpu_ratios), so runs of one
setup, made in different sessions, can be pooled: --pool A.json B.json ... gives the same
figures over all their pairs.
--median-check RUN.json plants a cost in the pairs of a run that had none (control or inert):
a given share of the with-halves made a given fraction slower, and shows how far the median
moves against the cost planted (which is share x fraction). Small costs (up to ~2 % of a half,
i.e. ~1 ms in a 50 ms half) move the median by their full mean; only rarer, larger stalls are
undercounted, and those slowdown_pct_total counts.

usage: inloop_ab.py --gpumon PATH --loop gemm|launch|cpu|dispatch [--layers L]
                    [--arm gpumon|control|inert] [--baseline fetch|none] [--pairs N]
                    [--steps K] [--cpus 2-5]
                    [--agent-cpus 8-11] [--no-bounded-reads] [--null-agent]
                    [--oom-steps N] [--hand-over-s S]
                    [--max-seconds S] [--out FILE.json]
       inloop_ab.py --pool A.json B.json ... [--out FILE.json]
       inloop_ab.py --median-check RUN.json
"""
import argparse
import itertools
import json
import os
import random
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench_agent import Agent, emit  # noqa: E402
from training_overhead import bootstrap_ci, make_loop  # noqa: E402

sys.path.insert(0, os.path.join(HERE, "..", "python"))


def cpu_range(text):
    lo, _, hi = text.partition("-")
    return set(range(int(lo), int(hi or lo) + 1))


def process_cpu_s(pid):
    """User + system CPU seconds of a process, all its threads."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# --null-agent: accepts connections and reads everything, doing nothing with it.
NULL_AGENT = """
import os, socket, sys, threading
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
os.chmod(sys.argv[1], 0o600)
s.listen(16)
def drain(c):
    while c.recv(1 << 16):
        pass
while True:
    threading.Thread(target=drain, args=(s.accept()[0],), daemon=True).start()
"""


class _ControlMonitor:
    """The shape of gpumon's calls with nothing in them: a generator around the loader and a
    method call per step."""

    def wrap(self, iterable):
        for batch in iterable:
            yield batch

    def step(self):
        return self


def slowdown(ratios):
    """Median and mean of the ratios as slowdowns in %, each with its 95 % interval."""
    lo, hi = bootstrap_ci(ratios)
    mlo, mhi = bootstrap_ci(ratios, stat=statistics.fmean)
    return {"median": 100 * (statistics.median(ratios) - 1),
            "ci95": [100 * (lo - 1), 100 * (hi - 1)],
            "mean": 100 * (statistics.fmean(ratios) - 1),
            "mean_ci95": [100 * (mlo - 1), 100 * (mhi - 1)]}


def total_slowdown(on_s, off_s):
    """sum(on) / sum(off) - 1 in %, with a 95 % bootstrap interval over the pairs."""
    pairs = list(zip(on_s, off_s))

    def ratio(sample):
        return sum(p[0] for p in sample) / sum(p[1] for p in sample)

    lo, hi = bootstrap_ci(pairs, stat=ratio)
    return {"slowdown_pct_total": 100 * (ratio(pairs) - 1),
            "slowdown_pct_total_ci95": [100 * (lo - 1), 100 * (hi - 1)]}


def ratio_figures(wall, cpu, on_s=None, off_s=None):
    """The output's figures over the pairs' ratios of wall and of main-thread CPU time, and
    over their wall times (on_s, off_s: seconds of each pair's halves) where given."""
    w = slowdown(wall)
    out = {"slowdown_pct_median": w["median"], "slowdown_pct_ci95": w["ci95"],
           "slowdown_pct_mean": w["mean"], "slowdown_pct_mean_ci95": w["mean_ci95"],
           "main_thread_cpu_slowdown_pct": slowdown(cpu)}
    if on_s:
        out.update(total_slowdown(on_s, off_s))
    return out


def load_run(path):
    """A run's output, with its pairs' ratios (exits when it has none)."""
    with open(path) as f:
        run = json.load(f)
    if not run.get("wall_ratios"):
        sys.exit("%s: no wall_ratios (a pooled summary, or a run from before they were kept)"
                 % path)
    run.setdefault("layers", None if run.get("loop") == "gemm" else 24)  # before --layers: 24
    run.setdefault("baseline", "none")  # before --baseline: the without-half fetched nothing
    return run


def median_check(path, seed=3, trials=200):
    """How the median of a no-cost run's ratios moves when a cost is planted in some halves."""
    wall = load_run(path)["wall_ratios"]
    base = statistics.median(wall)
    rng = random.Random(seed)
    rows = []
    for share, extra in [(0.5, 0.002), (0.5, 0.005), (0.1, 0.005), (0.1, 0.02), (0.05, 0.02),
                         (0.05, 0.05), (0.01, 0.2)]:
        moved = statistics.fmean(
            statistics.median([x * (1 + extra) if rng.random() < share else x for x in wall])
            - base for _ in range(trials))
        rows.append({"share_of_halves": share, "extra_pct": 100 * extra,
                     "cost_planted_pct": 100 * share * extra, "median_moves_pct": 100 * moved})
    return {"run": path, "pairs": len(wall), "planted": rows}


# Two-sided 95 % quantiles of Student's t by degrees of freedom (beyond 10: 2.0, a little wide).
T95 = {1: 12.71, 2: 4.30, 3: 3.18, 4: 2.78, 5: 2.57, 6: 2.45, 7: 2.36, 8: 2.31, 9: 2.26, 10: 2.23}


def between_runs(medians):
    """The runs' medians, their mean and its 95 % t-interval: an interval that also holds the
    machine-to-machine variation a bootstrap over the pooled pairs leaves out."""
    out = {"run_medians_pct": [round(m, 3) for m in medians]}
    if len(medians) > 1:
        mean = statistics.fmean(medians)
        half = T95.get(len(medians) - 1, 2.0) * statistics.stdev(medians) / len(medians) ** 0.5
        out.update({"mean_pct": mean, "mean_ci95": [mean - half, mean + half]})
    return out


def pool(paths):
    """The figures over the pairs of several runs of one setup."""
    runs = [load_run(path) for path in paths]
    setup = ("loop", "layers", "arm", "baseline", "steps_per_half", "cpus", "agent_cpus")
    for r in runs:
        if any(r[k] != runs[0][k] for k in setup):
            sys.exit("not one setup: %s" % [{k: r[k] for k in setup} for r in runs])
    wall = [x for r in runs for x in r["wall_ratios"]]
    cpu = [x for r in runs for x in r["cpu_ratios"]]
    timed = all("wall_on_s" in r for r in runs)  # runs before they were kept have no total
    on_s = [x for r in runs for x in r["wall_on_s"]] if timed else None
    off_s = [x for r in runs for x in r["wall_off_s"]] if timed else None
    out = {k: runs[0][k] for k in setup}
    out.update({"pooled": list(paths), "pairs": len(wall),
                "between_runs": between_runs([r["slowdown_pct_median"] for r in runs]),
                "seconds": round(sum(r["seconds"] for r in runs), 1),
                **ratio_figures(wall, cpu, on_s, off_s)})
    return out


def run_pairs(a, mon, step):
    batches = iter(mon.wrap(itertools.repeat(None)))
    plain = itertools.repeat(None)  # the loader a loop without gpumon iterates all the same
    perf, cpu = time.perf_counter, time.thread_time

    def with_calls():
        t, c = perf(), cpu()
        for _ in range(a.steps):
            next(batches)
            step()
            mon.step()
        return perf() - t, cpu() - c

    def without_fetching():  # before --baseline fetch: the with-half alone paid for a next()
        t, c = perf(), cpu()
        for _ in range(a.steps):
            step()
        return perf() - t, cpu() - c

    def fetching():
        t, c = perf(), cpu()
        for _ in range(a.steps):
            next(plain)
            step()
        return perf() - t, cpu() - c

    without = fetching if a.baseline == "fetch" else without_fetching

    for _ in range(3):  # warm up both paths
        with_calls(), without()
    rng = random.Random(1)
    wall, cpu_ratios, on_s, off_s = [], [], [], []
    t0 = perf()
    stop_at = t0 + a.max_seconds if a.max_seconds > 0 else float("inf")
    for _ in range(a.pairs):
        if perf() > stop_at:
            break
        if rng.random() < 0.5:
            on, off = with_calls(), without()
        else:
            off, on = without(), with_calls()
        wall.append(on[0] / off[0])
        cpu_ratios.append(on[1] / off[1])
        on_s.append(on[0])
        off_s.append(off[0])
    return {"pairs": len(wall), "seconds": round(perf() - t0, 1), "wall": wall,
            "cpu": cpu_ratios, "on_s": on_s, "off_s": off_s}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pool", nargs="+", metavar="RUN.json",
                    help="pool the pairs of these runs (one setup) instead of measuring")
    ap.add_argument("--median-check", metavar="RUN.json",
                    help="plant costs in a no-cost run's pairs and show how the median moves")
    ap.add_argument("--gpumon")
    ap.add_argument("--loop", choices=["gemm", "launch", "cpu", "dispatch"],
                    help="cpu: the launch loop's model on the CPU (checks this script, no GPU); "
                         "dispatch: a CPU loop bound by torch's per-op dispatch, as the launch "
                         "loop is by kernel launches (gpumon's per-step cost without a GPU)")
    ap.add_argument("--layers", type=int, default=24,
                    help="the launch loop's layers: 24 make a 4.5-5 ms step on the H200; fewer, "
                         "a shorter one (MEASURING.md's launch-bound loop is 1-3 ms)")
    ap.add_argument("--arm", choices=["gpumon", "control", "inert"], default="gpumon")
    ap.add_argument("--baseline", choices=["fetch", "none"], default="fetch",
                    help="what the half without gpumon does besides the step: fetch (a next() "
                         "on a plain iterator, as a loop without gpumon still iterates its "
                         "loader) or none (before this option: the with-half's next() counted "
                         "as gpumon's)")
    ap.add_argument("--pairs", type=int, default=200)
    ap.add_argument("--steps", type=int, default=40, help="steps in each half of a pair")
    ap.add_argument("--max-seconds", type=float, default=0,
                    help="stop making pairs after this long (0: no limit)")
    ap.add_argument("--cpus", default="", help="pin the training process to these CPUs, e.g. 2-5")
    ap.add_argument("--agent-cpus", default="",
                    help="pin the agent to these CPUs (default: any, like an agent gpumon starts)")
    ap.add_argument("--no-bounded-reads", action="store_true",
                    help="no allocator stats or CUDA events: the per-step calls and hand-over only")
    ap.add_argument("--null-agent", action="store_true",
                    help="a reader that discards the messages instead of the agent: the cost "
                         "inside the training process alone")
    ap.add_argument("--oom-steps", type=int, default=None,
                    help="steps kept for the OOM bundle (gpumon.start's oom_steps; default 64)")
    ap.add_argument("--hand-over-s", type=float, default=None,
                    help="seconds between hand-overs of the queued steps (default 0.2)")
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    if a.pool:
        emit(pool(a.pool), a.out)
        return
    if a.median_check:
        emit(median_check(a.median_check), a.out)
        return
    if not a.gpumon or not a.loop:
        ap.error("--gpumon and --loop are needed to measure")
    work = tempfile.mkdtemp(prefix="gpumon-ab-")
    sock = os.path.join(work, "agent.sock")
    log = open(os.path.join(work, "agent.log"), "w+")
    agent_cpus = cpu_range(a.agent_cpus) if a.agent_cpus else None
    command = [a.gpumon, "agent", "--socket", sock, "-o", os.path.join(work, "ab.gpumon"),
               "--interval", "100"]
    if a.null_agent:
        command = [sys.executable, "-c", NULL_AGENT, sock]
    import gpumon
    if a.hand_over_s is not None:
        gpumon._monitor._HOUSEKEEPING_INTERVAL = a.hand_over_s
    kwargs = {} if a.oom_steps is None else {"oom_steps": a.oom_steps}
    agent = Agent(command, sock, log=log, cpus=agent_cpus)
    if a.cpus:  # after the agent started, which keeps its own CPUs
        os.sched_setaffinity(0, cpu_range(a.cpus))
    with agent.monitor(**kwargs) as mon:
        if a.no_bounded_reads:
            mon._configure(mem_fn=None, gpu_timer=None)
        if a.arm == "inert":
            mon._clock.switch_off()  # the calls stay; they only check the switch
        step = make_loop(a.loop, a.layers)
        agent_cpu0 = process_cpu_s(agent.process.pid)
        r = run_pairs(a, _ControlMonitor() if a.arm == "control" else mon, step)
        agent_cpu = process_cpu_s(agent.process.pid) - agent_cpu0
        arm = a.arm + ("-no-bounded-reads" if a.no_bounded_reads and a.arm != "control" else "")
        arm += "-null-agent" if a.null_agent else ""
        arm += "-oom-steps-%d" % a.oom_steps if a.oom_steps is not None else ""
        arm += "-hand-over-%gs" % a.hand_over_s if a.hand_over_s is not None else ""
        out = {"loop": a.loop, "layers": a.layers if a.loop != "gemm" else None, "arm": arm,
               "baseline": a.baseline,
               "pairs": r["pairs"], "steps_per_half": a.steps, "cpus": a.cpus,
               "agent_cpus": a.agent_cpus or "any", "seconds": r["seconds"],
               **ratio_figures(r["wall"], r["cpu"], r["on_s"], r["off_s"]),
               "step_ms_with_median": 1e3 * statistics.median(r["on_s"]) / a.steps,
               "step_ms_without_median": 1e3 * statistics.median(r["off_s"]) / a.steps,
               "agent_cpu_s": round(agent_cpu, 2),
               "agent_cpu_pct_of_a_core": round(100 * agent_cpu / max(r["seconds"], 1e-9), 2),
               "agent_cpu_us_per_step": round(1e6 * agent_cpu / max(r["pairs"] * a.steps, 1), 1),
               "client": mon.stats(),
               "wall_ratios": [round(x, 6) for x in r["wall"]],
               "cpu_ratios": [round(x, 6) for x in r["cpu"]],
               "wall_on_s": [round(x, 9) for x in r["on_s"]],
               "wall_off_s": [round(x, 9) for x in r["off_s"]]}
    emit(out, a.out)


if __name__ == "__main__":
    main()
