// SPDX-License-Identifier: MIT
// The training domain: what a training process tells the agent about itself (its hello) and
// its steps, and what the agent saw of it (rank events). Every consumer (the recording, the
// exporter, the live and offline diagnoses, the report) reads these types; none of them is
// needed to build this one. Times of a step are the process's own wall clock in seconds since
// the Unix epoch; the agent's times are ms since the Unix epoch.
//
// Thread-safety: plain values.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>

#include "job/job_identity.h"

namespace gpumon::training {

/// The first message of a training process (docs/python.md, "Protocol"), parsed once at the
/// protocol boundary (protocol.h). Device fields are the process's view at hello time:
/// torch's "cuda:N" counts in CUDA's order after CUDA_VISIBLE_DEVICES, which is not NVML's
/// index; the PCI bus id and UUID name the same board in both (rank_device.h).
struct Hello {
  std::int64_t pid = 0;
  std::optional<std::int64_t> rank;  ///< RANK / LOCAL_RANK / WORLD_SIZE of the process
  std::optional<std::int64_t> local_rank;
  std::optional<std::int64_t> world_size;
  std::optional<std::string> hostname;
  std::optional<std::string> torch_version;
  std::optional<std::string> device;                ///< "cuda:0", "cpu"
  std::optional<std::string> pci_bus_id;            ///< of `device` ("00000000:18:00.0")
  std::optional<std::string> device_uuid;           ///< of `device` ("GPU-...")
  std::optional<std::string> cuda_visible_devices;  ///< the environment variable, verbatim
  std::optional<std::string> cuda_device_order;     ///< "PCI_BUS_ID", "FASTEST_FIRST", unset
  job::JobIdentity job;  ///< the process's own (its environment and cgroup); empty: not sent
  std::string json;      ///< the message, compact, as the recording stores it
};

/// One training step of one process. Durations in seconds. Allocator fields are
/// torch.cuda.memory_stats() values in bytes or counts, nullopt when the process did not send
/// them (no CUDA, or not read this step).
struct Step {
  std::int64_t received_ms = 0;  ///< when the agent received it (agent's wall clock)
  std::int64_t pid = 0;
  std::optional<std::int64_t> rank;  ///< from the process's hello
  std::optional<std::int64_t> local_rank;
  std::optional<std::int64_t> world_size;
  std::optional<std::string> device;  ///< as torch names it: "cuda:0" (CUDA order), "cpu"
  std::int64_t step = 0;
  double t_start_s = 0;
  double t_end_s = 0;
  double cpu_step_s = 0;             ///< wall time of the step seen from the CPU
  std::optional<double> gpu_step_s;  ///< CUDA events around the step; nullopt: not measured
  /// Blocked waiting for the data loader in this step; nullopt: not measured (the process
  /// never timed a fetch), which no consumer may read as 0.
  std::optional<double> data_wait_s;
  std::optional<std::int64_t> allocated_bytes;       ///< allocated_bytes.all.current
  std::optional<std::int64_t> reserved_bytes;        ///< reserved_bytes.all.current
  std::optional<std::int64_t> active_bytes;          ///< active_bytes.all.current
  std::optional<std::int64_t> inactive_split_bytes;  ///< inactive_split_bytes.all.current
  std::optional<std::int64_t> allocated_peak_bytes;  ///< allocated_bytes.all.peak
  std::optional<std::int64_t> reserved_peak_bytes;   ///< reserved_bytes.all.peak
  std::optional<std::int64_t> num_alloc_retries;
  std::optional<std::int64_t> num_ooms;
};

/// The data wait of the steps that measured it, and those steps' CPU time: the share of step
/// time spent waiting is of them alone, as an unmeasured wait is unknown, not 0. Every reader
/// of a wait share (the exporter, the diagnoses, the report) counts it here.
struct WaitTally {
  double wait_s = 0, step_s = 0;
  std::int64_t steps = 0;  ///< steps that measured their wait

  void add(double cpu_step_s, std::optional<double> data_wait_s) {
    if (!data_wait_s) return;
    wait_s += *data_wait_s, step_s += cpu_step_s, ++steps;
  }
  void add(const Step& s) { add(s.cpu_step_s, s.data_wait_s); }
  void add(const WaitTally& o) { wait_s += o.wait_s, step_s += o.step_s, steps += o.steps; }
  /// Waiting / step time in [0, 1]; nullopt when no step measured its wait (or took no time).
  std::optional<double> share() const {
    if (steps == 0 || !(step_s > 0)) return std::nullopt;
    return std::clamp(wait_s / step_s, 0.0, 1.0);
  }
};

/// A training process's hello, bye, out-of-memory report or disconnection, as the agent saw it.
struct RankEvent {
  std::int64_t time_ms = 0;  ///< agent's wall clock
  std::int64_t pid = 0;
  std::optional<std::int64_t> rank;
  /// "hello", "device" (the device it resolved after its hello), "bye", "oom", "error",
  /// "disconnect", "dropped" (bad input), "steps_lost", "action" (what the OOM guard or the
  /// adaptive loader did: protocol.h's Action, action_of())
  std::string kind;
  std::string detail;  ///< the message as compact JSON ({} for a disconnect)
  /// carries_hello(): the process's hello, typed (rank_event()); for "device" the hello with the
  /// device fields it sent later.
  std::optional<Hello> hello = std::nullopt;
  /// kind "hello": the connected process's pid in the agent's own pid namespace (SO_PEERCRED),
  /// which `pid` (the process's own view) is not inside a container; 0 when unknown.
  std::int64_t peer_pid = 0;

  /// The event holds the process's latest hello ("hello" or "device").
  bool carries_hello() const { return kind == "hello" || kind == "device"; }

  /// The process is gone from the agent: it said bye, disconnected, or was dropped.
  bool left() const { return kind == "bye" || kind == "disconnect" || kind == "dropped"; }
};

/// A training process's CPU time and memory (with its descendants: DataLoader workers) and its
/// host's free memory, sampled by the node once a second (host/process_stats.h). Bytes and
/// seconds; every value missing when unreadable, never 0.
struct ProcessSample {
  std::int64_t time_ms = 0;  ///< agent's wall clock
  std::int64_t pid = 0;
  std::optional<std::int64_t> rank;
  std::optional<double> cpu_s;  ///< utime + stime since the process started
  std::optional<std::int64_t> rss_bytes, pss_bytes;
  bool pss_is_rss = false;  ///< no smaps_rollup: `pss_bytes` is the RSS
  std::int32_t workers = 0;
  std::optional<double> workers_cpu_s;  ///< the live descendants' utime + stime
  std::optional<std::int64_t> workers_pss_bytes;
  std::optional<std::int64_t> mem_available_bytes, mem_total_bytes;    ///< /proc/meminfo
  std::optional<std::int64_t> cgroup_limit_bytes, cgroup_usage_bytes;  ///< its memory cgroup

  /// The process and its workers: what a leak grows; nullopt without the process's own PSS.
  std::optional<std::int64_t> total_pss_bytes() const {
    if (!pss_bytes) return std::nullopt;
    return *pss_bytes + workers_pss_bytes.value_or(0);
  }
};

/// A consumer of the training side: the recording, the exporter's training state, the live
/// diagnoser. Called on the agent's thread, one call at a time: implementations only queue or
/// update in-memory state, and never throw.
class StepSink {
 public:
  virtual ~StepSink() = default;
  virtual void on_step(const Step& step) = 0;
  virtual void on_rank_event(const RankEvent& event) = 0;
  /// The node's sample of a connected process (node/process_watcher.h); from its own thread,
  /// still one call at a time. Ignored unless overridden.
  virtual void on_process_sample(const ProcessSample& sample) { (void)sample; }
};

}  // namespace gpumon::training
