# SPDX-License-Identifier: MIT
"""Training slowdown and monitor CPU, side by side in one run (../shared/MEASURING.md).

One training process runs a reference loop and, block after block, switches monitors on and
off around equal windows of steps, the order of the arms rotated every block:
  off, off-control     no monitor (the second is the negative control: off against off)
  gpumon-10hz/100hz    `gpumon record --interval 100|10` in its own process, as users run it
  gpumon-python-10hz   the full integration: `gpumon agent -o F --interval 100` in its own
                       process and the training loop's three lines (`import gpumon`: the loader
                       wrapper and mon.step() every step, CUDA events, allocator stats at 1 Hz)
  seed-thread-10hz     the seed articles' monitor: a Python thread in the training process
                       calling pynvml (handle, utilization, temperature) and
                       torch.cuda.memory_stats every 100 ms
  nvidia-smi-1hz       a thread calling `nvidia-smi --query-gpu=... --format=csv` once a second
Loops (each step ends with a host sync, as `loss.item()` does):
  gemm    6 bf16 8192x8192 matrix products a step (GPU-bound, about 10 ms on an H200)
  launch  a 24-layer 256-wide MLP, forward + backward + SGD (launch-bound, 1-3 ms)
Monitor CPU is read from /proc/PID/task/*/schedstat (ns) for gpumon, thread_time() inside the
seed thread, and RUSAGE_CHILDREN around each nvidia-smi call.
For gpumon-python-10hz the wall and thread CPU time of the gpumon calls inside the loop are
also kept, step by step (in_loop_{wall,cpu}_*): the integration's cost in place, which the
block-to-block noise of a launch-bound loop on a shared host (+-10 %) cannot hide. off-control
times two empty calls the same way: the floor of that measure.

usage: training_overhead.py --gpumon PATH --loop gemm|launch [--blocks N] [--seconds S]
                            [--out DIR] [--arms a,b,...] [--cpus 2-5]
"""
import argparse
import itertools
import json
import os
import random
import resource
import signal
import statistics
import subprocess
import sys
import threading
import time

import torch

_ns = time.perf_counter_ns
_cpu_ns = time.thread_time_ns

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

ARMS = ["off", "off-control", "gpumon-10hz", "gpumon-100hz", "gpumon-python-10hz",
        "seed-thread-10hz", "nvidia-smi-1hz"]


def make_loop(kind, layers=24):
    """A training step on the GPU: "gemm" (compute-bound) or "launch" (`layers` small Linear +
    ReLU layers, forward and backward: ~300 kernels and 4.5-5 ms a step on the H200 with 24);
    "cpu" is the launch loop's model on the CPU, for checking the benchmarks without a GPU;
    "dispatch" the launch loop's shape with 8-wide layers on one CPU thread, so that torch's
    per-op dispatch dominates its step as kernel launches dominate the launch loop's (~0.9 ms
    a step with 24 layers on the 2-core VM): gpumon's per-step cost, measurable without a GPU."""
    if kind == "gemm":
        a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)

        def step():
            x = a
            for _ in range(6):
                x = (x @ b).clamp_(-1, 1)
            return x[0, 0].item()

        return step
    device = "cuda" if kind == "launch" else "cpu"
    width, batch = (8, 1) if kind == "dispatch" else (256, 64)
    if kind == "dispatch":
        torch.set_num_threads(1)
    modules = []
    for _ in range(layers):
        modules += [torch.nn.Linear(width, width), torch.nn.ReLU()]
    model = torch.nn.Sequential(*modules).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=1e-4)
    data = torch.randn(batch, width, device=device)

    def step():
        opt.zero_grad(set_to_none=True)
        loss = model(data).square().mean()
        loss.backward()
        opt.step()
        return loss.item()

    return step


def proc_cpu_ns(pid):
    total = 0
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                total += int(f.read().split()[0])
    except OSError:
        pass
    return total


class GpumonArm:
    def __init__(self, gpumon, hz, path):
        self.hz = hz
        self.path = path
        if os.path.exists(path):
            os.remove(path)
        self.proc = subprocess.Popen([gpumon, "record", "-o", path, "--interval", str(1000 // hz)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def begin(self):
        self.t0, self.c0 = time.perf_counter(), proc_cpu_ns(self.proc.pid)

    def end(self):
        wall = time.perf_counter() - self.t0
        cpu = (proc_cpu_ns(self.proc.pid) - self.c0) / 1e9
        self.proc.send_signal(signal.SIGINT)
        err = self.proc.communicate(timeout=10)[1].decode(errors="replace")
        return {"cpu_s": cpu, "wall_s": wall, "samples": wall * self.hz, "stderr": err[-300:]}


class InLoopTimer:
    """Times the arm's calls inside the loop (before_step and after_step, which the subclass's
    calls() makes), step by step, in wall and thread CPU time: the cost in place, cold caches
    after the step's host sync and all, which block-to-block noise cannot hide."""

    def init_timer(self):
        self.wall_ns, self.cpu_ns = [], []
        self.w = self.c = 0

    def before_step(self):
        w, c = _ns(), _cpu_ns()
        self.call_before()
        self.w, self.c = _ns() - w, _cpu_ns() - c

    def after_step(self):
        w, c = _ns(), _cpu_ns()
        self.call_after()
        self.cpu_ns.append(self.c + _cpu_ns() - c)
        self.wall_ns.append(self.w + _ns() - w)

    def timer_result(self):
        out = {}
        for name, values in (("wall", self.wall_ns), ("cpu", self.cpu_ns)):
            v = sorted(values)
            if v:
                out[f"in_loop_{name}_us_median"] = v[len(v) // 2] / 1e3
                out[f"in_loop_{name}_us_mean"] = statistics.fmean(v) / 1e3
                out[f"in_loop_{name}_us_p99"] = v[int(len(v) * 0.99)] / 1e3
        return out


class ControlArm(InLoopTimer):
    """off-control: no monitor, but the in-loop timer around two empty calls, so its figures
    are the floor of the in-loop measure (the timer's own cost and what any code pays right
    after the host sync)."""

    def __init__(self):
        self.init_timer()

    def call_before(self):
        pass

    def call_after(self):
        pass

    def begin(self):
        pass

    def end(self):
        return self.timer_result()


class GpumonPythonArm(InLoopTimer, GpumonArm):
    """An agent in its own process plus `import gpumon` in this one: every step goes through
    mon.wrap() and mon.step(). One Monitor for the whole run; it reconnects to each window's
    agent (steps of a window before the connection are queued, then sent)."""

    monitor = None

    def __init__(self, gpumon, hz, path, sock):
        self.hz = hz
        if os.path.exists(path):
            os.remove(path)
        self.proc = subprocess.Popen(
            [gpumon, "agent", "--socket", sock, "-o", path, "--interval", str(1000 // hz)],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if GpumonPythonArm.monitor is None:
            import gpumon as gpumon_py
            GpumonPythonArm.monitor = gpumon_py.start(socket_path=sock, start_agent=False)
        self.mon = GpumonPythonArm.monitor
        self.batches = iter(self.mon.wrap(itertools.repeat(None)))
        self.init_timer()

    def call_before(self):
        next(self.batches)

    def call_after(self):
        self.mon.step()

    def end(self):
        result = super().end()
        result["client"] = self.mon.stats()
        result.update(self.timer_result())
        return result


class ThreadArm:
    """A monitor running as a thread of this process; sample() returns the CPU seconds one
    sample cost, counted only between begin() and end()."""

    def __init__(self, period):
        self.period = period
        self.stop = threading.Event()
        self.cpu = 0.0
        self.samples = 0
        self.counting = False
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while not self.stop.is_set():
            cost = self.sample()
            if self.counting:
                self.cpu += cost
                self.samples += 1
            self.stop.wait(self.period)

    def begin(self):
        self.t0 = time.perf_counter()
        self.counting = True

    def end(self):
        self.counting = False
        wall = time.perf_counter() - self.t0
        self.stop.set()
        self.thread.join()
        return {"cpu_s": self.cpu, "wall_s": wall, "samples": self.samples}


class SeedThreadArm(ThreadArm):
    """The seed articles' GPUMonitor.get_stats in a loop, one GPU."""

    def __init__(self, hz):
        import pynvml
        pynvml.nvmlInit()
        self.nv = pynvml
        super().__init__(1.0 / hz)

    def sample(self):
        nv = self.nv
        c = time.thread_time()
        h = nv.nvmlDeviceGetHandleByIndex(0)
        util = nv.nvmlDeviceGetUtilizationRates(h).gpu
        m = torch.cuda.memory_stats(0)
        stats = {"util": util, "alloc": m.get("allocated_bytes.all.current", 0) // 2**20,
                 "reserved": m.get("reserved_bytes.all.current", 0) // 2**20,
                 "temp": nv.nvmlDeviceGetTemperature(h, nv.NVML_TEMPERATURE_GPU)}
        del stats
        return time.thread_time() - c


class NvidiaSmiArm(ThreadArm):
    QUERY = ["nvidia-smi", "--query-gpu=utilization.gpu,temperature.gpu,memory.used",
             "--format=csv,noheader"]

    def __init__(self):
        super().__init__(1.0)

    def sample(self):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(self.QUERY, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        return (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def start_arm(name, args, block):
    if name == "gpumon-python-10hz":
        sock = os.path.join(args.recordings, "gpumon-bench-agent.sock")
        return GpumonPythonArm(args.gpumon, 10, os.path.join(
            args.recordings, f"{args.loop}-{name}-{block}.gpumon"), sock)
    if name.startswith("gpumon-"):
        hz = int(name.split("-")[1].rstrip("hz"))
        return GpumonArm(args.gpumon, hz, os.path.join(args.recordings, f"{args.loop}-{name}-{block}.gpumon"))
    if name == "off-control":
        return ControlArm()
    if name == "seed-thread-10hz":
        return SeedThreadArm(10)
    if name == "nvidia-smi-1hz":
        return NvidiaSmiArm()
    return None


def bootstrap_ci(values, n=4000, seed=1, stat=statistics.median):
    """95 % percentile-bootstrap interval of stat(values)."""
    rng = random.Random(seed)
    est = sorted(stat(rng.choices(values, k=len(values))) for _ in range(n))
    return est[int(0.025 * n)], est[int(0.975 * n)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpumon", required=True)
    ap.add_argument("--loop", choices=["gemm", "launch"], required=True)
    ap.add_argument("--blocks", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=2.5)
    ap.add_argument("--out", default=".")
    ap.add_argument("--recordings", default="/dev/shm")
    ap.add_argument("--arms", default=",".join(ARMS), help="comma-separated subset of the arms")
    ap.add_argument("--cpus", default="", help="pin the training process to these CPUs, e.g. 2-5")
    args = ap.parse_args()
    arms = [a for a in args.arms.split(",") if a in ARMS]
    if args.cpus:
        lo, _, hi = args.cpus.partition("-")
        os.sched_setaffinity(0, set(range(int(lo), int(hi or lo) + 1)))
    step = make_loop(args.loop)
    for _ in range(50):  # warm up: kernels, allocator, clocks
        step()
    rows = []
    for block in range(args.blocks):
        order = arms[block % len(arms):] + arms[:block % len(arms)]
        for name in order:
            arm = start_arm(name, args, block)
            time.sleep(0.4)  # let a monitor start (gpumon: NVML init and first reads)
            if arm:
                arm.begin()
            times = []
            before = getattr(arm, "before_step", None)
            after = getattr(arm, "after_step", None)
            end = time.perf_counter() + args.seconds
            while time.perf_counter() < end:
                t = time.perf_counter()
                if before:
                    before()
                step()
                if after:
                    after()
                times.append(time.perf_counter() - t)
            cost = arm.end() if arm else {}
            rows.append({"block": block, "arm": name, "steps": len(times),
                         "mean_step_ms": 1e3 * statistics.fmean(times),
                         "median_step_ms": 1e3 * statistics.median(times), **cost})
            print(json.dumps(rows[-1]), flush=True)
    summary = {"loop": args.loop, "blocks": args.blocks, "seconds": args.seconds,
               "gpu": torch.cuda.get_device_name(0), "torch": torch.__version__,
               "cpus": args.cpus, "arms": {}}
    base = {r["block"]: r["mean_step_ms"] for r in rows if r["arm"] == "off"}
    for name in arms:
        mine = [r for r in rows if r["arm"] == name]
        ratios = [r["mean_step_ms"] / base[r["block"]] for r in mine]
        lo, hi = bootstrap_ci(ratios)
        entry = {"slowdown_pct_median": 100 * (statistics.median(ratios) - 1),
                 "slowdown_pct_ci95": [100 * (lo - 1), 100 * (hi - 1)],
                 "mean_step_ms": statistics.median(r["mean_step_ms"] for r in mine)}
        for clock in ("wall", "cpu"):
            if not mine or f"in_loop_{clock}_us_mean" not in mine[0]:
                continue
            # The timed calls' share of a step, from their in-loop time (medians over blocks).
            for stat in ("median", "mean", "p99"):
                key = f"in_loop_{clock}_us_{stat}"
                entry[key] = statistics.median(r[key] for r in mine)
            share = [100 * r[f"in_loop_{clock}_us_mean"] / 1e3 / r["mean_step_ms"] for r in mine]
            entry[f"in_loop_{clock}_pct_of_step_median"] = statistics.median(share)
            entry[f"in_loop_{clock}_pct_of_step_ci95"] = list(bootstrap_ci(share))
        if mine and "cpu_s" in mine[0]:
            per = [1e6 * r["cpu_s"] / r["samples"] for r in mine if r["samples"]]
            pct = [100 * r["cpu_s"] / r["wall_s"] for r in mine]
            entry["cpu_us_per_sample_median"] = statistics.median(per) if per else None
            entry["cpu_us_per_sample_ci95"] = list(bootstrap_ci(per)) if per else None
            entry["cpu_pct_of_core_median"] = statistics.median(pct)
        summary["arms"][name] = entry
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, f"overhead-{args.loop}.json"), "w") as f:
        json.dump({"summary": summary, "rows": rows}, f, indent=1)
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
