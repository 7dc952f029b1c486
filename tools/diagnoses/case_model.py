# SPDX-License-Identifier: MIT
"""The model the labelled cases are written in: ranks that run steps on GPUs, from which both
files of a case follow, so that the fake GPUs and the step stream always tell the same story.

- A step of a rank is (t_start, t_end, data wait, GPU kernel time). The GPU is busy from
  t_start + wait for `compute` seconds (or from t_start when `busy_first`), idle otherwise.
- The scenario's utilization / GPM / power series are `points` (hold) built from the union of
  the busy intervals of the ranks on each GPU; memory_used follows the ranks' reserved memory
  plus the CUDA context (and foreign processes); each rank is a process of its GPU (pid = the
  pid of its hello).
- The step stream is what the Python client sends (python/gpumon/_monitor.py): a hello, then
  one step per step with allocator stats at most every `allocator_interval_s` (read at the step's
  end), sent at the next step's end when a CUDA timer is used (GPU time read a step late, never
  a synchronize), else right after the step. gpu_step_s is the GPU time of the step's kernels
  (Run.gpu_timing "kernel": what `with mon.step():` measures when nothing else runs in the
  body), or (gpu_timing "events") what a plain mon.step() measures since cdf6ce1: the time
  between the GPU passing the previous step's end event and this one's, idle gaps included.

All times are seconds from the case's start (scenario time 0 = the agent's nvmlInit, which the
runner starts at the same moment as the replay clock). No third-party modules.
"""
import json
import os
import random

GIB = 1 << 30
MIB = 1 << 20
H200_TOTAL = 150754820096
H200_RESERVED = 644939776
CONTEXT_BYTES = 560 * MIB  # CUDA context + cuBLAS workspace of one training process
DRIVER_BYTES = 420 * MIB  # memory NVML counts as used outside any process

# field -> (busy, idle): what a GPU shows while a rank's kernels run / while it does not.
BUSY_LEVELS = {
    "utilization_gpu_pct": (98, 0),
    "utilization_memory_pct": (46, 0),
    "sm_active_pct": (81, 0),
    "sm_occupancy_pct": (36, 0),
    "tensor_active_pct": (55, 0),
    "dram_bw_util_pct": (61, 0),
    "power_draw_mw": (640000, 128000),
}
NOISE = {"utilization_gpu_pct": 1.5, "utilization_memory_pct": 2, "sm_active_pct": 1.5,
         "sm_occupancy_pct": 1, "tensor_active_pct": 1.5, "dram_bw_util_pct": 2,
         "power_draw_mw": 9000}


def r3(x):
    return round(x, 3)


class Rank:
    """One training process: its rank, its GPU (NVML index, equal to the CUDA index here)."""

    def __init__(self, rank, gpu, world_size, pid=None, cuda=True, cuda_stats=True,
                 gpu_timer=True, hello_at=0.3, device=None, mem=None):
        self.rank = rank
        self.gpu = gpu
        self.world_size = world_size
        self.pid = pid if pid is not None else 41000 + rank
        self.cuda = cuda
        self.cuda_stats = cuda and cuda_stats
        self.gpu_timer = cuda and gpu_timer
        self.hello_at = hello_at
        self.device = device if device is not None else ("cuda:%d" % gpu if cuda else "cpu")
        # mem(t) -> allocator stats dict (bytes, counters); None: no memory on the GPU.
        self.mem = mem
        self.steps = []  # dicts: t_start, t_end, wait, compute, busy (list of (a, b))
        self.end = None  # (at, "bye" | "crash" | "open")
        self.extra = []  # (at, message) sent besides the steps (oom)
        self.outside = None  # f(t): bytes the process holds outside PyTorch's allocator

    def hello(self):
        return {"type": "hello", "v": 1, "pid": self.pid, "rank": self.rank,
                "local_rank": self.rank if self.rank is not None else None,
                "world_size": self.world_size, "hostname": "case-node",
                "torch_version": "2.11.0+cu130", "device": self.device}


def steady_mem(allocated, reserved=None, peak=None, inactive_split=64 * MIB):
    """Allocator stats that do not change: `allocated` at every step's end."""
    reserved = reserved if reserved is not None else allocated + 2 * GIB
    peak = peak if peak is not None else reserved - 256 * MIB

    def mem(t):
        return {"allocated": allocated, "reserved": reserved, "active": allocated,
                "inactive_split": inactive_split, "allocated_peak": peak,
                "reserved_peak": reserved, "num_alloc_retries": 0, "num_ooms": 0}
    return mem


class Run:
    def __init__(self, name, duration_s, n_gpus, seed=1):
        self.name = name
        self.duration_s = duration_s
        self.n_gpus = n_gpus
        self.rng = random.Random(seed)
        self.seed = seed
        self.ranks = []
        self.fields = [dict() for _ in range(n_gpus)]  # per GPU: field -> series (overrides)
        self.levels = [dict(BUSY_LEVELS) for _ in range(n_gpus)]  # per GPU: field -> (busy, idle)
        self.busy_level_at = [dict() for _ in range(n_gpus)]  # field -> f(t): busy value at t
        self.foreign = [[] for _ in range(n_gpus)]  # extra processes (dicts of the scenario)
        self.device_extra = [dict() for _ in range(n_gpus)]  # xid_events, lost_at_s, ...
        self.gpu_names = ["NVIDIA H200"] * n_gpus
        # gpumon.start(allocator_interval_s=...): 1 s by default; 0 sends allocator stats with
        # every step (the memory cases, so that a 20 s case has enough samples to judge).
        self.allocator_interval_s = 1.0
        # How gpu_step_s is measured (module docstring): "kernel" or "events".
        self.gpu_timing = "kernel"
        self.spans = [[] for _ in range(n_gpus)]  # (a, b, {field: value}) besides the steps

    def add_span(self, gpu, a, b, levels):
        """GPU `gpu` shows `levels` (field -> value; other fields their busy level) from a to b,
        outside any step (a hung collective spinning, another job)."""
        self.spans[gpu].append((a, b, levels))

    def add_rank(self, *args, **kw):
        r = Rank(*args, **kw)
        self.ranks.append(r)
        return r

    # ---- the steps ----

    def run_steps(self, t_begin, t_stop, plan, ranks=None, sync=True):
        """Steps from t_begin until a step would end after t_stop. plan(k, t) -> one dict per rank
        ({wait, compute, host, busy_first}); with sync (DDP) every rank's step lasts as long as
        the slowest rank's wait + compute + host. Returns the time the last step ended."""
        ranks = ranks if ranks is not None else self.ranks
        t, k = t_begin, 0
        while True:
            parts = plan(k, t)
            lengths = [p["wait"] + p["compute"] + p.get("host", 0.004) for p in parts]
            if sync:
                lengths = [max(lengths)] * len(parts)
            if t + max(lengths) > t_stop:
                return t
            for r, p, length in zip(ranks, parts, lengths):
                a = t if p.get("busy_first") else t + p["wait"]
                r.steps.append({"t_start": t, "t_end": t + length, "wait": p["wait"],
                                "compute": p["compute"], "busy": [(a, a + p["compute"])]})
            t += max(lengths)
            k += 1

    def jitter(self, x, rel=0.02):
        return x * (1 + self.rng.uniform(-rel, rel))

    # ---- the scenario ----

    def _gpu_ranks(self, gpu):
        return [r for r in self.ranks if r.gpu == gpu and r.cuda]

    def _busy_intervals(self, gpu):
        spans = sorted(b for r in self._gpu_ranks(gpu) for s in r.steps for b in s["busy"])
        merged = []
        for a, b in spans:
            if merged and a <= merged[-1][1] + 0.001:
                merged[-1][1] = max(merged[-1][1], b)
            else:
                merged.append([a, b])
        return merged

    def _activity_series(self, gpu, field):
        busy, idle = self.levels[gpu][field]
        at = self.busy_level_at[gpu].get(field)
        points = [[0, idle]]
        spans = [(a, b, at(a) if at else busy) for a, b in self._busy_intervals(gpu)]
        spans += [(a, b, lv.get(field, busy)) for a, b, lv in self.spans[gpu]]
        for a, b, value in sorted(spans, key=lambda x: x[0]):
            points.append([r3(a), value])
            points.append([r3(b), idle])
        dedup = []
        for p in points:  # times strictly increasing: a later point at the same ms wins
            if dedup and dedup[-1][0] >= p[0]:
                dedup[-1] = [dedup[-1][0], p[1]]
            else:
                dedup.append(p)
        values = dedup if len(dedup) > 1 else dedup + [[self.duration_s + 1, idle]]
        series = {"points": {"values": values}}
        noise = NOISE.get(field)
        if noise:
            series["noise"] = noise
            series["clamp"] = [0, 100] if field.endswith("_pct") else [0, 700000]
        return series

    def process_memory(self, r, t):
        """Bytes NVML shows for rank r's process at t (None before it starts / after it ends)."""
        if t < r.hello_at - 0.2 or (r.end and r.end[1] != "open" and t >= r.end[0]):
            return None
        stats = r.mem(t) if r.mem else None
        outside = r.outside(t) if r.outside else 0
        return (stats["reserved"] if stats else 0) + CONTEXT_BYTES + outside

    def _memory_series(self, gpu, step_s=0.25):
        points, t = [], 0.0
        while t <= self.duration_s + 1:
            used = DRIVER_BYTES
            for r in self._gpu_ranks(gpu):
                used += self.process_memory(r, t) or 0
            for p in self.foreign[gpu]:
                if p.get("start_s", 0) <= t < p.get("end_s", 1e9):
                    used += p["bytes_at"](t) if "bytes_at" in p else p["used_memory_bytes"]
            if not points or points[-1][1] != used:
                points.append([r3(t), used])
            t += step_s
        return {"points": {"values": points}} if len(points) > 1 else points[0][1]

    def _process_entries(self, gpu):
        out = []
        for r in self._gpu_ranks(gpu):
            t, pts = 0.0, []
            while t <= self.duration_s + 1:
                m = self.process_memory(r, t)
                if m is not None and (not pts or pts[-1][1] != m):
                    pts.append([r3(t), m])
                t += 0.25
            series = {"points": {"values": pts}} if len(pts) > 1 else (pts[0][1] if pts else 0)
            entry = {"pid": r.pid, "name": "python3", "used_memory_bytes": series,
                     "start_s": r3(max(0.0, r.hello_at - 0.2)),
                     "sm_util_pct": {"constant": 90, "noise": 4, "clamp": [0, 100]}}
            if r.end and r.end[1] != "open":
                entry["end_s"] = r3(r.end[0])
            out.append(entry)
        for p in self.foreign[gpu]:
            q = {k: v for k, v in p.items() if k != "bytes_at"}
            if "bytes_at" in p:
                pts, t = [], 0.0
                while t <= self.duration_s + 1:
                    pts.append([r3(t), p["bytes_at"](t)])
                    t += 0.5
                q["used_memory_bytes"] = {"points": {"values": pts}}
            out.append(q)
        return out

    def scenario(self, description):
        devices = []
        for g in range(self.n_gpus):
            fields = {f: self._activity_series(g, f) for f in BUSY_LEVELS}
            fields["memory_used_bytes"] = self._memory_series(g)
            fields["temperature_gpu_c"] = {"constant": 58 + g % 3, "noise": 0.6}
            fields.update(self.fields[g])
            dev = {"name": self.gpu_names[g], "fields": fields,
                   "processes": self._process_entries(g)}
            dev.update(self.device_extra[g])
            devices.append(dev)
        return {
            "name": "diag-" + self.name,
            "description": description,
            "seed": self.seed,
            "device_template": {
                "name": "NVIDIA H200", "memory_total_bytes": H200_TOTAL,
                "memory_reserved_bytes": H200_RESERVED, "unsupported": ["fan_speed_pct"],
                "fields": {"sm_clock_mhz": 1980, "mem_clock_mhz": 3201, "clock_event_reasons": 0,
                           "temperature_memory_c": {"constant": 64, "noise": 0.6},
                           "pcie_tx_kb_per_s": {"constant": 250000, "noise": 20000},
                           "pcie_rx_kb_per_s": {"constant": 900000, "noise": 50000}}},
            "devices": devices,
        }

    # ---- the step stream ----

    def _gpu_seconds(self, r, k, s):
        if not r.gpu_timer:
            return None
        if self.gpu_timing == "kernel":
            return round(s["compute"] + 0.0004, 6)

        def passed(step):  # when the GPU passes the end event recorded at the step's end
            return max(step["t_end"], max(b for _, b in step["busy"]))
        start = passed(r.steps[k - 1]) if k else s["t_start"]
        return round(passed(s) - start, 6)

    def _step_message(self, r, k, s, mem):
        return {"type": "step", "step": k, "t_start": round(s["t_start"], 6),
                "t_end": round(s["t_end"], 6), "cpu_step_s": round(s["t_end"] - s["t_start"], 6),
                "gpu_step_s": self._gpu_seconds(r, k, s),
                "data_wait_s": round(s["wait"], 6), "mem": mem}

    def stream(self, allocator_interval_s=1.0):
        lines = []
        for conn, r in enumerate(self.ranks):
            lines.append((r.hello_at, conn, None, r.hello()))
            mem_next = 0.0
            held = None  # a step waiting for its GPU time (sent at the next step's end)
            for k, s in enumerate(r.steps):
                mem = None
                if r.cuda_stats and r.mem and s["t_end"] >= mem_next:
                    mem_next = s["t_end"] + allocator_interval_s
                    mem = r.mem(s["t_end"])
                msg = self._step_message(r, k, s, mem)
                if r.gpu_timer:
                    if held is not None:
                        lines.append((s["t_end"] + 0.001, conn, None, held))
                    held = msg
                else:
                    lines.append((s["t_end"] + 0.002, conn, None, msg))
            for at, msg in r.extra:
                lines.append((at, conn, None, msg))
            end_at, how = r.end if r.end else (self.duration_s - 0.5, "bye")
            if held is not None and how == "bye":
                lines.append((end_at - 0.001, conn, None, held))
            if how == "bye":
                lines.append((end_at, conn, None, {"type": "bye"}))
            if how != "open":
                lines.append((end_at + 0.0005, conn, "close", None))
        lines.sort(key=lambda x: (x[0], x[1]))
        out = []
        for at, conn, kind, msg in lines:
            if kind == "close":
                out.append({"conn": conn, "at": r3(at), "close": True})
            else:
                out.append({"conn": conn, "at": round(at, 4), "msg": msg})
        return out


def write_case(folder, run, case, expected, description):
    """Writes scenario.json, steps.ndjson, case.json and expected.json into folder."""
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "scenario.json"), "w") as f:
        json.dump(run.scenario(description), f, separators=(",", ":"))
        f.write("\n")
    with open(os.path.join(folder, "steps.ndjson"), "w") as f:
        for line in run.stream(run.allocator_interval_s):
            f.write(json.dumps(line, separators=(",", ":")) + "\n")
    meta = {"name": run.name, "duration_s": run.duration_s,
            "gpus": run.n_gpus, "ranks": len(run.ranks),
            "allocator_interval_s": run.allocator_interval_s, "gpu_timing": run.gpu_timing,
            "generator": "tools/diagnoses/make_cases.py"}
    meta.update(case)
    with open(os.path.join(folder, "case.json"), "w") as f:
        json.dump(meta, f, indent=2)
        f.write("\n")
    with open(os.path.join(folder, "expected.json"), "w") as f:
        json.dump(expected, f, indent=2)
        f.write("\n")
