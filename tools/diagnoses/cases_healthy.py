# SPDX-License-Identifier: MIT
"""Healthy runs of several shapes: no finding at warning or above may appear."""
from case_model import Run, steady_mem
from cases_common import GIB, MIB, expect, finding, hnoise, mem_stats, same_for_all

MEMORY_IDS = ["memory_leak", "oom_forecast", "fragmentation"]


def healthy_single_gpu_short_steps():
    run = Run("healthy_single_gpu_short_steps", 20, 1, seed=11)
    run.add_rank(0, 0, 1, mem=steady_mem(20 * GIB, 23 * GIB))
    run.run_steps(1.0, 19.2, same_for_all(1, 0.0015, 0.046, 0.002, run))
    return run, {"planted": "nothing: one GPU, 50 ms steps, GPU busy 96 %, memory flat",
                 "onset_s": None}, expect(forbidden=["data_loader_stall", "launch_bound"])


def healthy_ddp8_long_steps():
    run = Run("healthy_ddp8_long_steps", 72, 8, seed=12)
    for r in range(8):
        run.add_rank(r, r, 8, mem=steady_mem(96 * GIB, 104 * GIB))
    # 2 s steps: 1.86 s of kernels, the rest the all-reduce tail (a short dip at each boundary).
    run.run_steps(1.0, 71.3, same_for_all(8, 0.01, 1.86, 0.12, run, rel=0.005))
    return run, {"planted": "nothing: 8 GPUs in DDP, 2 s steps (35 per rank), in step, even",
                 "onset_s": None,
                 "long_because": "the engine judges idle GPUs and imbalance over at least 60 s "
                                 "of training: a healthy run must go through those rules too"}, \
        expect(forbidden=["imbalance", "straggler", "rank_wait", "idle_gpu"])


def healthy_no_steps():
    run = Run("healthy_no_steps", 10, 2, seed=13)
    for g in range(2):
        run.add_span(g, 0.2, 11, {})
        run.foreign[g].append({"pid": 52001 + g, "name": "python3", "start_s": 0,
                               "used_memory_bytes": 101 * GIB})
    return run, {"planted": "nothing: two busy GPUs, a job that does not use import gpumon "
                            "(no steps at all)", "onset_s": None}, \
        expect(forbidden=["foreign_memory", "idle_gpu", "hang"])


def healthy_steps_without_cuda_stats():
    run = Run("healthy_steps_without_cuda_stats", 20, 1, seed=14)
    run.add_rank(0, 0, 1, cuda_stats=False, gpu_timer=False, mem=steady_mem(30 * GIB))
    run.run_steps(1.0, 19.2, same_for_all(1, 0.003, 0.29, 0.006, run))
    return run, {"planted": "nothing: GPU training whose steps carry no GPU time and no "
                            "allocator stats (gpu_step_s and mem null)", "onset_s": None}, \
        expect(forbidden=MEMORY_IDS)


def healthy_cpu_only():
    run = Run("healthy_cpu_only", 20, 1, seed=15)
    run.add_rank(0, 0, 1, cuda=False)
    run.run_steps(1.0, 19.2, same_for_all(1, 0.002, 0.2, 0.004, run))
    return run, {"planted": "nothing: a CPU-only training (device cpu) on a machine with an "
                            "idle GPU nobody asked for", "onset_s": None}, \
        expect(forbidden=["idle_gpu", "launch_bound"])


def healthy_warmup_plateau():
    run = Run("healthy_warmup_plateau", 20, 1, seed=16)
    run.allocator_interval_s = 0

    def mem(t):  # the allocator grows for 4 s (warm-up, cudnn autotune), then stays flat
        a = 8 * GIB + 18 * GIB * min(max(t - 1.0, 0) / 4.0, 1.0) + hnoise(t, 20 * MIB, 1)
        reserved = int(a * 1.12) // (2 * MIB) * (2 * MIB) + GIB
        return mem_stats(a, reserved, peak=reserved - 300 * MIB)
    run.add_rank(0, 0, 1, mem=mem)
    run.run_steps(1.0, 19.2, same_for_all(1, 0.003, 0.24, 0.005, run))
    return run, {"planted": "nothing: memory grows 8 -> 26 GiB during a 4 s warm-up, then flat "
                            "for 14 s", "onset_s": None}, expect(forbidden=MEMORY_IDS)


def healthy_allocator_cache():
    run = Run("healthy_allocator_cache", 20, 1, seed=17)
    run.allocator_interval_s = 0
    run.add_rank(0, 0, 1, mem=steady_mem(12 * GIB, 40 * GIB, peak=38 * GIB))
    run.run_steps(1.0, 19.2, same_for_all(1, 0.003, 0.33, 0.005, run))
    return run, {"planted": "allocator caching only: 12 GiB allocated at each step's end, 40 GiB "
                            "reserved, flat (the activations' peak is cached)", "onset_s": 1.0}, \
        expect([finding("allocator_cache", severity="info")], forbidden=MEMORY_IDS)


def healthy_small_data_wait():
    run = Run("healthy_small_data_wait", 20, 2, seed=18)
    for r in range(2):
        run.add_rank(r, r, 2, mem=steady_mem(50 * GIB, 56 * GIB))

    def plan(k, t):
        return [{"wait": run.jitter(0.012, 0.5), "compute": run.jitter(0.38), "host": 0.005}
                for _ in range(2)]
    run.run_steps(1.0, 19.2, plan)
    return run, {"planted": "nothing: 2 ranks, data wait 3 % of the step (a healthy loader)",
                 "onset_s": None}, expect(forbidden=["data_loader_stall", "launch_bound"])


CASES = [healthy_single_gpu_short_steps, healthy_ddp8_long_steps, healthy_no_steps,
         healthy_steps_without_cuda_stats, healthy_cpu_only, healthy_warmup_plateau,
         healthy_allocator_cache, healthy_small_data_wait]
