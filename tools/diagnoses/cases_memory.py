# SPDX-License-Identifier: MIT
"""Memory: a true leak told apart from allocator caching and fragmentation; OOM forecasts that
count memory outside PyTorch; OOMs; memory of processes that are not training ranks."""
from case_model import Run, steady_mem
from cases_common import GIB, MIB, expect, finding, hnoise, mem_stats, round_up, same_for_all


def _train(run, rank_mem, period_compute=0.29, t_stop=None, **rank_kw):
    r = run.add_rank(0, 0, 1, mem=rank_mem, **rank_kw)
    run.run_steps(1.0, t_stop or run.duration_s - 0.8,
                  same_for_all(1, 0.003, period_compute, 0.006, run))
    return r


def memory_leak_linear():
    run = Run("memory_leak_linear", 20, 1, seed=31)
    run.allocator_interval_s = 0
    onset = 4.0

    def mem(t):  # from 4 s every step keeps ~40 MiB more (a list of losses with their graphs)
        a = 8 * GIB + max(t - onset, 0) * 133 * MIB
        peak = a + 9 * GIB
        return mem_stats(a, round_up(peak + 512 * MIB, 512 * MIB), peak=peak)
    _train(run, mem)
    return run, {"planted": "from 4 s allocated memory at each step's end grows ~133 MiB/s "
                            "(40 MiB a step; 8 -> 9.6 GiB), reserved follows in 512 MiB segments",
                 "onset_s": onset}, \
        expect([finding("memory_leak", gpus=[0], ranks=[0])],
               forbidden=["allocator_cache", "fragmentation"], allowed=["oom_forecast"])


def memory_leak_noisy():
    run = Run("memory_leak_noisy", 20, 1, seed=32)
    run.allocator_interval_s = 0
    onset = 3.0

    def mem(t):  # a slow leak under batch-to-batch noise: not monotonic, the trend is clear
        a = 5 * GIB + max(t - onset, 0) * 60 * MIB + hnoise(t, 30 * MIB, 2)
        peak = a + 3 * GIB + hnoise(t, 200 * MIB, 3)
        return mem_stats(a, round_up(8.5 * GIB + max(t - onset, 0) * 60 * MIB, 2 * GIB),
                         peak=peak)
    _train(run, mem)
    return run, {"planted": "from 3 s allocated memory at each step's end grows 60 MiB/s with "
                            "+-30 MiB of noise per sample (not monotonic; 5 -> 5.7 GiB)", "onset_s": onset}, \
        expect([finding("memory_leak", ranks=[0])],
               forbidden=["allocator_cache", "fragmentation"], allowed=["oom_forecast"])


def allocator_cache_variable_batches():
    run = Run("allocator_cache_variable_batches", 20, 1, seed=33)
    run.allocator_interval_s = 0

    def mem(t):  # batches of varying length: peaks vary, the cache grew to the largest, then flat
        a = 15 * GIB + hnoise(t, 60 * MIB, 4)
        peak = a + 8 * GIB + hnoise(t, 6 * GIB, 5)
        reserved = 27 * GIB if t < 2.0 else (33 * GIB if t < 4.5 else 36 * GIB)
        return mem_stats(a, reserved, peak=min(peak, reserved - 64 * MIB),
                         inactive_split=600 * MIB + hnoise(t, 200 * MIB, 6))
    _train(run, mem)
    return run, {"planted": "variable-length batches: allocated 15 GiB at each step's end (flat, "
                            "noisy), reserved grows 27 -> 36 GiB in the first 4.5 s as larger "
                            "batches come, then flat; no retries", "onset_s": 1.0}, \
        expect([finding("allocator_cache", severity="info")],
               forbidden=["memory_leak", "fragmentation", "oom_forecast"])


def fragmentation_retries():
    run = Run("fragmentation_retries", 20, 1, seed=34)
    run.allocator_interval_s = 0
    onset = 5.0

    def mem(t):  # from 5 s the cache is split into pieces no request fits: cudaFree and retry
        frag = min(max(t - onset, 0) / 4.0, 1.0)
        retries = int(max(t - onset, 0) / 0.8)
        return mem_stats(70 * GIB + hnoise(t, 40 * MIB, 7), 128 * GIB, peak=118 * GIB,
                         inactive_split=6 * GIB + frag * 34 * GIB, retries=retries)
    run.add_rank(0, 0, 1, mem=mem)

    def plan(k, t):  # a step that retries frees the cache and waits: 0.35 s longer, GPU idle
        retry = t >= onset and k % 2 == 0
        return [{"wait": 0.003, "compute": run.jitter(0.25), "host": 0.25 if retry else 0.006}]
    run.run_steps(1.0, 19.2, plan)
    return run, {"planted": "from 5 s: 128 GiB reserved for 70 GiB allocated, inactive split "
                            "6 -> 40 GiB, an alloc retry every ~0.8 s (every other step 0.25 s longer)",
                 "onset_s": onset}, \
        expect([finding("fragmentation", gpus=[0], ranks=[0])],
               forbidden=["memory_leak", "oom_forecast"])


def fragmentation_growing_reserved():
    run = Run("fragmentation_growing_reserved", 20, 1, seed=35)
    run.allocator_interval_s = 0
    onset = 4.0

    def mem(t):  # allocated flat, the cache keeps taking new segments it then cannot reuse
        grow = max(t - onset, 0) * 0.5 * GIB
        retries = sum(1 for at in (8.0, 12.0, 15.0) if t >= at)
        return mem_stats(60 * GIB + hnoise(t, 40 * MIB, 8), round_up(92 * GIB + grow, 20 * MIB),
                         peak=85 * GIB, inactive_split=4 * GIB + grow * 0.9, retries=retries)
    _train(run, mem, period_compute=0.35)
    return run, {"planted": "from 4 s reserved grows 0.5 GiB/s (92 -> 98 GiB) while allocated "
                            "stays at 60 GiB; inactive split grows with it; alloc retries at "
                            "8, 12, 15 s", "onset_s": onset}, \
        expect([finding("fragmentation", ranks=[0])], forbidden=["memory_leak"],
               allowed=["oom_forecast"])


def oom_forecast_outside_pytorch():
    run = Run("oom_forecast_outside_pytorch", 130, 1, seed=36)
    run.allocator_interval_s = 0
    onset = 4.0
    r = _train(run, steady_mem(100 * GIB, 104 * GIB, peak=103 * GIB), period_compute=0.45)
    # NCCL / cuBLAS workspaces / a non-PyTorch extension of the same process: NVML sees it,
    # torch.cuda.memory_stats() does not.
    r.outside = lambda t: 14 * GIB + int(max(t - onset, 0) * 0.1 * GIB)
    return run, {"planted": "from 4 s the training process's memory outside PyTorch grows "
                            "0.1 GiB/s (NVML used 119 -> 131 GiB of 140 GiB), PyTorch's "
                            "allocated and reserved flat: full ~90 s after the end",
                 "onset_s": onset,
                 "long_because": "the engine fits NVML memory over at least 120 s "
                                 "(oom_min_window_s)"}, \
        expect([finding("oom_forecast", gpus=[0])],
               forbidden=["memory_leak", "foreign_memory", "fragmentation"])


def oom_forecast_leak_near_full():
    run = Run("oom_forecast_leak_near_full", 20, 1, seed=37)
    run.allocator_interval_s = 0
    onset = 3.0

    def mem(t):  # near-OOM growth: a leak of 0.5 GiB/s starting 118 GiB into a 140 GiB GPU
        a = 110 * GIB + max(t - onset, 0) * 0.5 * GIB
        return mem_stats(a, round_up(a + 8 * GIB, 256 * MIB), peak=a + 7 * GIB)
    _train(run, mem, period_compute=0.39)
    return run, {"planted": "from 3 s allocated grows 0.5 GiB/s from 110 GiB, reserved 118 -> "
                            "125 GiB of 140 GiB: OOM in ~30 s", "onset_s": onset}, \
        expect([finding("memory_leak", ranks=[0]), finding("oom_forecast", gpus=[0])],
               forbidden=["fragmentation", "allocator_cache"])


def oom_crash():
    run = Run("oom_crash", 12, 1, seed=38)
    r = run.add_rank(0, 0, 1, mem=steady_mem(121 * GIB, 134 * GIB, peak=133 * GIB))
    last = run.run_steps(1.0, 9.0, same_for_all(1, 0.003, 0.33, 0.006, run))
    # The next batch is longer: torch.cuda.OutOfMemoryError; the process exits through the
    # exception (atexit closes the monitor: the held step and a bye are sent).
    r.extra.append((last + 0.2, {"type": "oom", "step": len(r.steps),
                                 "requested_bytes": 6 * GIB}))
    r.end = (last + 0.3, "bye")
    return run, {"planted": "at ~9 s the rank reports an OOM (6 GiB requested, 134 GiB reserved "
                            "of 140 GiB) and exits through the exception",
                 "onset_s": round(last + 0.2, 3)}, \
        expect([finding("oom", ranks=[0])], forbidden=["hang", "memory_leak"],
               allowed=["oom_forecast"])


def oom_caught():
    run = Run("oom_caught", 20, 1, seed=39)
    run.allocator_interval_s = 0
    onset = 7.0

    def mem(t):  # the loop catches torch.cuda.OutOfMemoryError and skips the batch
        ooms = sum(1 for at in (onset, 12.0) if t >= at)
        return mem_stats(100 * GIB + hnoise(t, 50 * MIB, 9), 137 * GIB,
                         peak=136.5 * GIB if ooms else 128 * GIB, ooms=ooms)
    _train(run, mem)
    return run, {"planted": "the loop catches two OOMs (7 s, 12 s) and goes on: num_ooms 0 -> 1 "
                            "-> 2 in the allocator stats, no oom message", "onset_s": onset}, \
        expect([finding("oom", ranks=[0])], forbidden=["memory_leak", "hang"],
               allowed=["oom_forecast"])


def foreign_memory():
    run = Run("foreign_memory", 20, 2, seed=40)
    for r in range(2):
        run.add_rank(r, r, 2, mem=steady_mem(70 * GIB, 76 * GIB))
    run.foreign[1].append({"pid": 7777, "name": "python3", "start_s": 0,
                           "used_memory_bytes": 30 * GIB})
    run.run_steps(1.0, 19.2, same_for_all(2, 0.003, 0.35, 0.005, run))
    return run, {"planted": "a forgotten notebook kernel (pid 7777, not a rank) holds 30 GiB on "
                            "GPU 1 while ranks 0 and 1 train", "onset_s": 1.0}, \
        expect([finding("foreign_memory", gpus=[1])], allowed=["imbalance"])


CASES = [memory_leak_linear, memory_leak_noisy, allocator_cache_variable_batches,
         fragmentation_retries, fragmentation_growing_reserved, oom_forecast_outside_pytorch,
         oom_forecast_leak_near_full, oom_crash, oom_caught, foreign_memory]
