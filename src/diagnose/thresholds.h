// SPDX-License-Identifier: MIT
// Thresholds: every number a rule compares against, with the reason for its value.
// docs/DIAGNOSES.md carries the same table; keep the two in step.
//
// Thread-safety: plain values.
#pragma once

#include <cstdint>

namespace gpumon::diagnose {

inline constexpr double kMiB = 1024.0 * 1024.0;
inline constexpr double kGiB = 1024.0 * kMiB;

struct Thresholds {
  // --- shared ---
  /// Steps skipped at the start of each rank: compilation, cudnn autotuning, allocator growth
  /// and loader warm-up make the first steps unlike the rest.
  int warmup_steps = 10;
  /// Steps after warm-up a rank needs before step rules judge it: fewer is noise.
  int min_steps = 20;
  /// Steps at which a finding's confidence counts its data as complete.
  double full_confidence_steps = 200;
  /// NVML utilization at or above which a GPU counts as busy: below it a GPU idles more than
  /// it works in each sample period.
  double busy_util_pct = 30;

  // --- data_loader_stall ---
  /// Share of step time blocked on the next batch: a fifth of the run lost to the loader is
  /// worth fixing and is beyond what prefetching jitter gives (a few %).
  double data_wait_share = 0.2;
  /// ... and the mean wait per step must reach this (s): a 20% share of a 1 ms step is noise.
  double data_wait_min_s = 0.005;
  /// Share from which the stall is critical: the GPU waits more than it works.
  double data_wait_critical_share = 0.5;
  /// Share of the wait the slowest 5 % of steps hold from which the stall is "a few long
  /// waits" rather than "every step waits": evenly spread waits put ~5 % there, a wait every
  /// 50th step all of it.
  double data_wait_bursty_share = 0.5;

  // --- launch_bound ---
  /// GPU time / CPU time of a step below this: the GPU idles half of each step without waiting
  /// for data (launch overhead, syncs, Python).
  double launch_gpu_ratio = 0.5;
  /// Data-wait share under which a step counts as "no data wait".
  double launch_max_data_wait_share = 0.05;
  /// Mean NVML utilization below this while a rank's steady steps progress, without data wait:
  /// the GPU idles more than half of the time (the launch_gpu_ratio test for clients whose GPU
  /// time spans the whole step, as a plain mon.step() measures it). Any rank at or above it
  /// keeps the others waiting instead (rank_wait / straggler). Healthy real runs sit at 80-95%.
  double launch_idle_util_pct = 50;
  /// Seconds of steady steps that test needs: short runs (the examples, smoke tests of a few
  /// hundred steps) last 1-3 s and are start-up more than training; 10 s of steady steps is 100
  /// samples at 10 Hz (the test also wants >= 10 samples, i.e. 10 s at the 1 s default).
  double launch_idle_min_s = 10;
  /// Busy by NVML (>= busy_util_pct) but GPM SM activity below this: kernels are tiny or sparse;
  /// dense training keeps SMs > 50% active.
  double launch_sm_active = 0.25;
  /// Busy time (s) the SM-activity test needs: a minute of steady low activity is the kernels'
  /// nature, not a phase (start-up, evaluation).
  double launch_min_busy_s = 60;

  // --- throttled ---
  /// Share of busy samples held below max clock by thermal/power/hw-slowdown reasons: brief
  /// power-cap dips are normal under load; a fifth of the time is a lasting loss.
  double throttle_share = 0.2;
  /// Busy samples needed: a few seconds of data say little about sustained clocks.
  int throttle_min_samples = 50;
  /// Share from which throttling is critical.
  double throttle_critical_share = 0.6;

  // --- rank_wait / straggler / imbalance (multi-rank) ---
  /// Fast rank's GPU time below this share of the slowest rank's while step times match: it
  /// spends the rest waiting in a collective.
  double rank_wait_gpu_ratio = 0.7;
  /// A straggler's step (GPU time, or CPU time when ranks do not synchronise) exceeds the other
  /// ranks' median by this factor: 15% is well beyond run-to-run noise (~2-5%).
  double straggler_factor = 1.15;
  /// ... in at least this share of the aligned steps ("consistently").
  double straggler_consistency = 0.6;
  /// Seconds (every rank training, every GPU sampled) the GPU-activity comparison needs: when
  /// collectives equalise step times the straggler is the rank whose GPU works most; ten
  /// one-second means are past sampling noise and short phases.
  double straggler_min_windows = 10;
  /// Coefficient of variation of per-rank median step times / per-GPU mean utilization or
  /// memory above which work is imbalanced: identical replicas stay within a few %.
  double imbalance_cv = 0.2;
  /// ... and the busiest and least busy GPU differ by at least this many utilization points.
  double imbalance_util_gap_pct = 20;
  /// ... or memory used differs by at least this much (rank 0 often holds a little extra).
  double imbalance_mem_gap_bytes = 4 * kGiB;

  // --- idle_gpu ---
  /// Mean utilization at or below which a GPU is idle while others train.
  double idle_util_pct = 5;
  /// Seconds of training (others busy) needed before calling a GPU idle.
  double idle_min_s = 60;
  /// ... or this many seconds when every rank also made at least idle_min_steps steady steps:
  /// a phase (start-up, evaluation, a checkpoint) lasts seconds and few steps, while 20 s of
  /// 1000+ identical steps is the run's settled shape (real runs of 25-40 s with 10^4 steps).
  /// Without steps the full idle_min_s applies.
  double idle_min_steps_s = 20;
  int idle_min_steps = 1000;

  // --- hang ---
  /// A gap without steps longer than this many median step times ...
  double hang_step_factor = 20;
  /// ... and longer than this (s): live, a hang is reported within half a minute (a user
  /// watching waits no longer); a checkpoint or evaluation that pauses longer and then resumes
  /// is reported as a stall (warning), periodic shorter ones as step_pauses.
  double hang_min_s = 30;
  /// ... or this (s) when the rank was stopped while silent (disconnected without a bye, left
  /// on an exception or Ctrl-C, or its command was killed or failed): it never resumed, so no
  /// checkpoint explains the silence; 20 s is still thousands of steps of ms and ~50 steps of 0.4
  /// s, far beyond step jitter or a slow data batch.
  double hang_dead_min_s = 20;

  // --- step_pauses ---
  /// A step interval past this many usual periods ...
  double pause_factor = 5;
  /// ... and past the usual period by this much (s) is a pause: a 1 ms step jittering to 5 ms
  /// is noise, a 50 ms stop is a checkpoint, an evaluation or a collection.
  double pause_min_s = 0.05;
  /// Pauses needed: one long interval alone is a phase (the first evaluation), not a pattern.
  int pause_min_count = 3;
  /// Share of wall time the pauses' excess must take, as for the loader: a fifth of the run.
  double pause_share = 0.2;
  /// ... critical from here: training loses more time than it trains.
  double pause_critical_share = 0.5;
  /// Pauses are periodic when this share of their spacings (in steps) lies within 10 % of the
  /// median spacing.
  double pause_regular_share = 0.6;

  // --- memory ---
  /// Steps of allocated-at-step-end a leak needs (after warm-up).
  int leak_min_steps = 20;
  /// Growth over the steps (Theil-Sen slope x steps) a leak needs, in bytes and relative to the
  /// first allocated value: a few MiB are allocator rounding; at the same point of each step
  /// allocated memory is normally identical, so a steady 2% of it is no noise.
  double leak_min_growth_bytes = 64 * kMiB;
  double leak_min_growth_ratio = 0.02;
  /// Reserved - allocated above this (bytes and share of reserved) while reserved stays flat:
  /// caching worth knowing about (info).
  double cache_min_bytes = 1 * kGiB;
  double cache_min_share = 0.3;
  /// Inactive split bytes above this share of reserved (and above the byte floor):
  /// fragmentation wastes that memory; PyTorch's own guidance starts to worry around a quarter.
  double frag_split_share = 0.25;
  double frag_min_split_bytes = 512 * kMiB;
  /// New cudaMalloc retries (cache flushes) during the run that mean fragmentation or pressure.
  int frag_min_new_retries = 2;
  /// Forecast horizon: memory reaches total within this many minutes at the recent growth
  /// (warning), or this many (critical).
  double oom_forecast_min = 60;
  double oom_forecast_critical_min = 10;
  /// Window of recent NVML memory samples the slope is fitted on (s), and the least span.
  double oom_window_s = 600;
  double oom_min_window_s = 120;
  /// Growth over the window needed to forecast at all (share of total): a flat line with noise
  /// must not forecast an OOM in 10 years... or in 50 minutes.
  double oom_min_growth_share = 0.02;
  /// Memory another process holds on a training GPU that matters (bytes): CUDA contexts of
  /// monitoring tools take ~500 MiB.
  double foreign_min_bytes = 1 * kGiB;

  // --- ecc_errors ---
  /// Corrected (single-bit) ECC errors per hour on one GPU from which they warn; fewer are
  /// information. ECC correcting a bit is the memory working as designed (a particle strike
  /// flips one now and then) and costs nothing; healthy HBM corrects a handful over days. Ten
  /// an hour is a cell or row weakening, the trend NVIDIA's driver itself flags (XID 92, high
  /// single-bit error rate) before errors turn uncorrectable.
  double ecc_corrected_per_hour = 10;
  /// A run (or live window) shorter than this (hours) counts as this long: ten errors, not one
  /// error in a six-minute window, make ten an hour.
  double ecc_rate_min_hours = 1;

  // --- health score ---
  /// Points a finding takes off at full confidence (scaled by its confidence).
  double warning_points = 15;
  double critical_points = 35;

  // --- host_memory_leak ---
  /// Seconds of a process's samples (one a second), after its warm-up steps, needed to call a
  /// trend: fewer do not tell a leak from the first batches' allocations.
  double host_leak_min_s = 10;
  /// Growth of a process's PSS with its workers' over that span, in bytes and as a share of
  /// the first quarter's: CPython's arenas, the allocator's caches and a first epoch's lazy
  /// caches move a training process by tens of MB; a leak worth a finding is hundreds.
  double host_leak_min_growth_bytes = 256 * kMiB;
  double host_leak_min_growth_ratio = 0.25;
  /// Critical when the forecast says the host (MemAvailable) or the memory cgroup (its limit)
  /// runs out within this many minutes: the OOM killer then ends the run before anyone looks.
  double host_leak_critical_min = 10;

  // --- cpu_straggler ---
  /// Windows (s) over which each rank's CPU seconds per step are compared, and how many the
  /// common span needs: /proc counts CPU time in 10 ms ticks, so a busy rank gains ~200 ticks
  /// in 2 s, far above the tick's noise.
  double cpu_straggler_window_s = 2;
  int cpu_straggler_min_windows = 5;
  /// The slow rank's CPU seconds per step over the others' median: the work one rank does
  /// beyond the others. 1.5 is well above what the same work on the same cores varies by
  /// (a few %), and below the 2-3x of an uneven shard or a rank doing extra evaluation.
  double cpu_straggler_ratio = 1.5;
  /// CPU cores the slow rank keeps busy at least (CPU s per wall s): below it the ranks are
  /// not CPU-bound and their CPU time says little about their speed.
  double cpu_straggler_min_cores = 0.2;
};

}  // namespace gpumon::diagnose
