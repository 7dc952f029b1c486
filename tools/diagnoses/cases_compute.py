# SPDX-License-Identifier: MIT
"""Where step time goes: data-loader stalls, launch/sync-bound hosts, throttled clocks, ranks
waiting on each other."""
from case_model import Run, steady_mem
from cases_common import GIB, expect, finding


def data_loader_stall_sawtooth():
    run = Run("data_loader_stall_sawtooth", 20, 1, seed=21)
    run.add_rank(0, 0, 1, mem=steady_mem(22 * GIB, 26 * GIB))
    onset = 5.0

    def plan(k, t):  # from 5 s the loader (2 workers, heavy decode) cannot keep up
        wait = 0.004 if t < onset else run.jitter(0.18, 0.15)
        return [{"wait": wait, "compute": run.jitter(0.20), "host": 0.005}]
    run.run_steps(1.0, 19.2, plan)
    return run, {"planted": "from 5 s each step waits ~0.18 s for its batch (47 % of the step); "
                            "the GPU idles while it waits (utilization sawtooth)",
                 "onset_s": onset}, \
        expect([finding("data_loader_stall", gpus=[0], ranks=[0])], forbidden=["launch_bound"])


def data_loader_stall_ddp():
    run = Run("data_loader_stall_ddp", 20, 2, seed=22)
    for r in range(2):
        run.add_rank(r, r, 2, mem=steady_mem(40 * GIB, 44 * GIB))

    def plan(k, t):  # both loaders are slow and jittery; DDP makes both wait for the slower
        return [{"wait": run.rng.uniform(0.06, 0.22), "compute": run.jitter(0.18), "host": 0.004}
                for _ in range(2)]
    run.run_steps(1.0, 19.2, plan)
    return run, {"planted": "2 DDP ranks whose loaders each block 0.06-0.22 s per batch (random, "
                            "no rank consistently slower)", "onset_s": 1.0}, \
        expect([finding("data_loader_stall", ranks=[0, 1])],
               forbidden=["launch_bound", "straggler"])


def launch_bound_gpm():
    run = Run("launch_bound_gpm", 75, 1, seed=23)
    run.add_rank(0, 0, 1, mem=steady_mem(9 * GIB, 11 * GIB))
    onset = 5.0
    # From 5 s (batch size 4 after a config change) the GPU runs tiny kernels back to back:
    # NVML calls it busy, but few SMs are active.
    for field, busy in (("sm_active_pct", 11), ("sm_occupancy_pct", 5), ("tensor_active_pct", 2),
                        ("dram_bw_util_pct", 7)):
        normal = run.levels[0][field][0]
        run.busy_level_at[0][field] = lambda t, b=busy, n=normal: n if t < onset else b
    run.run_steps(1.0, 74.2, lambda k, t: [{"wait": 0.002, "compute": run.jitter(0.40),
                                            "host": 0.003}])
    return run, {"planted": "from 5 s NVML utilization stays ~98 % but GPM SM activity drops "
                            "to ~11 % (tiny kernels launched one by one), no data wait",
                 "onset_s": onset,
                 "long_because": "the engine judges SM activity on at least 600 busy samples "
                                 "(launch_min_samples: a minute at 10 Hz)"}, \
        expect([finding("launch_bound", gpus=[0])], forbidden=["data_loader_stall"])


def launch_bound_gaps(name="launch_bound_gaps", gpu_timing="kernel"):
    run = Run(name, 20, 1, seed=24)
    run.gpu_timing = gpu_timing
    run.gpu_names = ["NVIDIA A100-SXM4-80GB"]  # no GPM: only the gaps tell
    run.device_extra[0] = {"memory_total_bytes": 85899345920, "memory_reserved_bytes": 563085312,
                           "power_limit_mw": 400000}
    run.levels[0]["power_draw_mw"] = (360000, 90000)
    run.add_rank(0, 0, 1, mem=steady_mem(30 * GIB, 34 * GIB))
    onset = 5.0

    def plan(k, t):  # from 5 s: .item() and logging every step, the GPU idles 60 % of it
        if t < onset:
            return [{"wait": 0.003, "compute": run.jitter(0.30), "host": 0.01}]
        return [{"wait": 0.003, "compute": run.jitter(0.10), "host": run.jitter(0.17),
                 "busy_first": True}]
    run.run_steps(1.0, 19.2, plan)
    return run, {"planted": "from 5 s each step keeps the GPU busy 0.10 s of 0.28 s, the rest is "
                            "host work with no data wait (no GPM on this A100)",
                 "onset_s": onset}, \
        expect([finding("launch_bound", gpus=[0])], forbidden=["data_loader_stall"])


def launch_bound_gaps_plain_timing():
    """The same run as a plain mon.step() reports it: gpu_step_s spans the idle gaps."""
    run, case, expected = launch_bound_gaps("launch_bound_gaps_plain_timing", "events")
    case["planted"] += "; gpu_step_s as a plain mon.step() measures it (= the step)"
    return run, case, expected


def throttled_thermal():
    run = Run("throttled_thermal", 20, 1, seed=25)
    run.add_rank(0, 0, 1, mem=steady_mem(60 * GIB, 66 * GIB))
    onset = 6.0
    run.fields[0] = {
        "temperature_gpu_c": {"ramp": {"from": 68, "to": 88, "start_s": 4, "duration_s": 4},
                              "noise": 0.5},
        "clock_event_reasons": {"step": [[0, 0], [onset, 32], [9, 96]]},
        "sm_clock_mhz": {"step": [[0, 1980], [onset, 1590], [9, 1410]]},
        "graphics_clock_mhz": {"step": [[0, 1980], [onset, 1590], [9, 1410]]},
    }

    def plan(k, t):
        clock = 1980 if t < onset else (1590 if t < 9 else 1410)
        return [{"wait": 0.003, "compute": run.jitter(0.30 * 1980 / clock, 0.01), "host": 0.004}]
    run.run_steps(1.0, 19.2, plan)
    return run, {"planted": "from 6 s thermal slowdown (sw, then hw too: reasons 0x20, 0x60), "
                            "SM clock 1980 -> 1590 -> 1410 MHz at 86-88 C, steps 40 % longer",
                 "onset_s": onset}, \
        expect([finding("throttled", gpus=[0], mentions=["thermal"])])


def throttled_power_cap():
    run = Run("throttled_power_cap", 20, 1, seed=26)
    run.add_rank(0, 0, 1, mem=steady_mem(60 * GIB, 66 * GIB))
    onset = 5.0
    # From 5 s the enforced limit drops to 450 W (nvidia-smi -pl, or the node's power budget):
    # the clock falls to 1305 MHz (66 % of max), far below what the default cap costs.
    run.busy_level_at[0]["power_draw_mw"] = lambda t: 640000 if t < onset else 449000
    run.fields[0] = {
        "power_limit_mw": {"step": [[0, 700000], [onset, 450000]]},
        "clock_event_reasons": {"step": [[0, 0], [onset, 4]]},
        "sm_clock_mhz": {"step": [[0, 1980], [onset, 1305]]},
        "graphics_clock_mhz": {"step": [[0, 1980], [onset, 1305]]},
    }

    def plan(k, t):
        clock = 1980 if t < onset else 1305
        return [{"wait": 0.003, "compute": run.jitter(0.25 * 1980 / clock, 0.01), "host": 0.004}]
    run.run_steps(1.0, 19.2, plan)
    return run, {"planted": "from 5 s the enforced power limit drops to 450 W: SW power cap "
                            "reason (0x4) at 449 W, SM clock 1305 MHz (66 % of max), steps 50 % "
                            "longer", "onset_s": onset}, \
        expect([finding("throttled", gpus=[0], mentions=["power"])])


def healthy_power_capped_dense():
    run = Run("healthy_power_capped_dense", 20, 1, seed=28)
    run.add_rank(0, 0, 1, mem=steady_mem(60 * GIB, 66 * GIB))
    # What a real H200 does under dense bf16 GEMMs at its default 700 W limit
    # (testdata/recordings/h200-gemm-10hz.gpumon): capped all the time at ~88 % of max clock.
    run.levels[0]["power_draw_mw"] = (698000, 128000)
    run.fields[0] = {"clock_event_reasons": {"step": [[0, 0], [1.0, 4]]},
                     "sm_clock_mhz": {"constant": 1740, "noise": 15}}
    run.run_steps(1.0, 19.2, lambda k, t: [{"wait": 0.003, "compute": run.jitter(0.30),
                                            "host": 0.004}])
    return run, {"planted": "nothing: dense GEMMs at the default 700 W limit, power cap reason "
                            "(0x4) all along at ~1740 MHz (88 % of max), as the real H200 "
                            "recording shows", "onset_s": None}, \
        expect(forbidden=["throttled"], max_health=100, min_health=90)


def rank_wait_rotating():
    run = Run("rank_wait_rotating", 20, 4, seed=27)
    for r in range(4):
        run.add_rank(r, r, 4, mem=steady_mem(50 * GIB, 56 * GIB))
    order = []

    def plan(k, t):  # each step one rank (a different one in each round of 4) gets a long batch
        if not order:
            order.extend(run.rng.sample(range(4), 4))
        slow = order.pop()
        return [{"wait": 0.003, "compute": run.jitter(0.30 if r == slow else 0.14), "host": 0.004}
                for r in range(4)]
    run.run_steps(1.0, 19.2, plan)
    return run, {"planted": "4 DDP ranks; at every step one rank (each in turn) computes 0.30 s, "
                            "the other three 0.14 s and then wait: every GPU ~50 % idle, no rank "
                            "consistently slower", "onset_s": 1.0}, \
        expect([finding("rank_wait")], forbidden=["straggler", "data_loader_stall",
                                                 "launch_bound"])


CASES = [data_loader_stall_sawtooth, data_loader_stall_ddp, launch_bound_gpm, launch_bound_gaps,
         launch_bound_gaps_plain_timing, throttled_thermal, throttled_power_cap, healthy_power_capped_dense, rank_wait_rotating]
