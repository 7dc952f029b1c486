# SPDX-License-Identifier: MIT
"""Several GPUs: imbalance, a straggler with its cause, a GPU left idle, hangs."""
from case_model import Run, steady_mem
from cases_common import GIB, expect, finding, same_for_all


def imbalance_memory():
    run = Run("imbalance_memory", 72, 4, seed=51)
    for r in range(4):  # rank 0 gathers every rank's outputs for its metrics
        m = steady_mem(88 * GIB, 96 * GIB) if r == 0 else steady_mem(41 * GIB, 48 * GIB)
        run.add_rank(r, r, 4, mem=m)
    run.run_steps(1.0, 71.2, same_for_all(4, 0.003, 0.45, 0.005, run))
    return run, {"planted": "4 DDP ranks in step; rank 0 (GPU 0) holds 96 GiB, the others 48 GiB",
                 "onset_s": 1.0, "long_because": "the engine judges idle GPUs and imbalance over at least 60 s of "
                                 "training (idle_min_s)"}, \
        expect([finding("imbalance", gpus=[0])], forbidden=["straggler", "idle_gpu"])


def imbalance_utilization():
    run = Run("imbalance_utilization", 72, 4, seed=52)
    for r in range(4):
        run.add_rank(r, r, 4, mem=steady_mem(50 * GIB, 56 * GIB))

    def plan(k, t):  # an uneven split: ranks 2 and 3 get twice the work of ranks 0 and 1
        return [{"wait": 0.003, "compute": run.jitter(0.45 if r >= 2 else 0.22), "host": 0.004}
                for r in range(4)]
    run.run_steps(1.0, 71.2, plan)
    return run, {"planted": "ranks 2 and 3 compute 0.45 s per step, ranks 0 and 1 0.22 s and "
                            "wait: GPUs 0-1 ~47 % busy, GPUs 2-3 ~96 %", "onset_s": 1.0,
                 "long_because": "the engine judges idle GPUs and imbalance over at least 60 s of "
                                 "training (idle_min_s)"}, \
        expect([finding("imbalance")], forbidden=["straggler", "idle_gpu"],
               allowed=["rank_wait"])


def straggler_throttled_gpu(name="straggler_throttled_gpu", gpu_timing="kernel"):
    run = Run(name, 20, 4, seed=53)
    run.gpu_timing = gpu_timing
    onset = 5.0
    for r in range(4):
        run.add_rank(r, r, 4, mem=steady_mem(50 * GIB, 56 * GIB))
    run.fields[2] = {
        "temperature_gpu_c": {"ramp": {"from": 70, "to": 87, "start_s": 3, "duration_s": 2}},
        "clock_event_reasons": {"step": [[0, 0], [onset, 32]]},
        "sm_clock_mhz": {"step": [[0, 1980], [onset, 1500]]},
        "graphics_clock_mhz": {"step": [[0, 1980], [onset, 1500]]},
    }

    def plan(k, t):  # rank 2's GPU runs at 1500 MHz from 5 s: 32 % more GPU time
        slow = 1980 / 1500 if t >= onset else 1.0
        return [{"wait": 0.003, "compute": run.jitter(0.24 * (slow if r == 2 else 1.0), 0.01),
                 "host": 0.004} for r in range(4)]
    run.run_steps(1.0, 19.2, plan)
    return run, {"planted": "from 5 s GPU 2 throttles (sw thermal, 1500 MHz): rank 2 computes "
                            "0.32 s, the others 0.24 s and wait for it", "onset_s": onset}, \
        expect([finding("straggler", ranks=[2], mentions=["throttl"]),
                finding("throttled", gpus=[2])],
               allowed=["rank_wait", "imbalance"])


def straggler_throttled_gpu_plain_timing():
    """The same run as a plain mon.step() reports it: every rank's gpu_step_s is the step."""
    run, case, expected = straggler_throttled_gpu("straggler_throttled_gpu_plain_timing",
                                                  "events")
    case["planted"] += "; gpu_step_s as a plain mon.step() measures it (= the step)"
    return run, case, expected


def straggler_slow_loader():
    run = Run("straggler_slow_loader", 20, 4, seed=54)
    for r in range(4):
        run.add_rank(r, r, 4, mem=steady_mem(50 * GIB, 56 * GIB))

    def plan(k, t):  # rank 3 reads its shard from a slow network disk
        return [{"wait": run.jitter(0.13, 0.1) if r == 3 else 0.003, "compute": run.jitter(0.20),
                 "host": 0.004} for r in range(4)]
    run.run_steps(1.0, 19.2, plan)
    return run, {"planted": "rank 3 waits 0.13 s per batch, the other ranks 3 ms; everyone's step "
                            "is 0.33 s", "onset_s": 1.0}, \
        expect([finding("straggler", ranks=[3], mentions=["data"])],
               allowed=["rank_wait", "imbalance", "data_loader_stall"])


def idle_gpu_unused():
    run = Run("idle_gpu_unused", 72, 4, seed=55)
    for r in range(2):  # torchrun --nproc_per_node=2 on a 4-GPU node
        run.add_rank(r, r, 2, mem=steady_mem(60 * GIB, 66 * GIB))
    run.run_steps(1.0, 71.2, same_for_all(2, 0.003, 0.45, 0.005, run))
    return run, {"planted": "2 ranks train on GPUs 0 and 1 of a 4-GPU node; GPUs 2 and 3 stay "
                            "idle, no process", "onset_s": 1.0, "long_because": "the engine judges idle GPUs and imbalance over at least 60 s of "
                                 "training (idle_min_s)"}, \
        expect([finding("idle_gpu", gpus=[2, 3])], forbidden=["imbalance"])


def idle_gpu_same_device():
    run = Run("idle_gpu_same_device", 72, 2, seed=56)
    for r in range(2):  # the classic: torch.cuda.set_device(local_rank) forgotten
        run.add_rank(r, 0, 2, mem=steady_mem(40 * GIB, 44 * GIB))
    run.run_steps(1.0, 71.2, same_for_all(2, 0.003, 0.45, 0.005, run))
    return run, {"planted": "both ranks of a 2-GPU DDP run use cuda:0 (set_device forgotten): "
                            "GPU 0 holds both processes, GPU 1 idle", "onset_s": 1.0,
                 "long_because": "the engine judges idle GPUs and imbalance over at least 60 s of "
                                 "training (idle_min_s)"}, \
        expect([finding("idle_gpu", gpus=[1])], allowed=["imbalance"])


def hang_collective():
    run = Run("hang_collective", 80, 2, seed=57)
    onset = 7.0
    for r in range(2):
        rk = run.add_rank(r, r, 2, mem=steady_mem(60 * GIB, 66 * GIB))
        rk.end = (80, "open")
    last = run.run_steps(1.0, onset, same_for_all(2, 0.003, 0.38, 0.005, run))
    for g in range(2):  # the all-reduce never completes: NCCL spins, NVML says busy
        run.add_span(g, last + 0.01, 81, {"sm_active_pct": 4, "sm_occupancy_pct": 1,
                                          "tensor_active_pct": 0, "dram_bw_util_pct": 1,
                                          "power_draw_mw": 210000})
    return run, {"planted": "from ~7 s both ranks stop stepping (a collective that never "
                            "completes) and stay connected for 73 s (190 step times); the GPUs "
                            "look busy (NCCL spinning)", "onset_s": round(last, 3),
                 "long_because": "the engine calls a gap a hang only beyond 30 s (hang_min_s: "
                                 "checkpoints and evaluation pause training for tens of seconds)"}, \
        expect([finding("hang", ranks=[0, 1])], forbidden=["launch_bound", "data_loader_stall"])


def hang_single_gpu_idle():
    run = Run("hang_single_gpu_idle", 80, 1, seed=58)
    onset = 6.0
    r = run.add_rank(0, 0, 1, mem=steady_mem(30 * GIB, 34 * GIB))
    r.end = (80, "open")
    last = run.run_steps(1.0, onset, same_for_all(1, 0.003, 0.24, 0.005, run))
    return run, {"planted": "from ~6 s the rank makes no progress (a dead loader worker) and "
                            "stays connected for 74 s (300 step times); the GPU idles",
                 "onset_s": round(last, 3), "long_because": "the engine calls a gap a hang only beyond 30 s (hang_min_s: "
                                 "checkpoints and evaluation pause training for tens of seconds)"}, \
        expect([finding("hang", ranks=[0])], forbidden=["data_loader_stall", "idle_gpu"])


CASES = [imbalance_memory, imbalance_utilization, straggler_throttled_gpu,
         straggler_throttled_gpu_plain_timing, straggler_slow_loader,
         idle_gpu_unused, idle_gpu_same_device, hang_collective, hang_single_gpu_idle]
