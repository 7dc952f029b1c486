// SPDX-License-Identifier: MIT
// RankMemoryFile: publishes the attached training processes' latest allocator memory, each
// placed on its GPU, and each GPU's latest utilization and temperature (training/rank_memory.h)
// in a file beside the agent socket, `<socket>.ranks.json`. `gpumon` and `gpumon watch` read it
// to show PyTorch's allocated and reserved memory per GPU (cli/rank_rows.h); a training process
// reads it for its own table (Python's mon.log_table()), so it never calls NVML itself. A file,
// not a question on the socket: a reader can never slow or block the agent, and the agent's
// thread spends one small write a second at most.
//
// A step sink (the ranks) and a sample sink (the GPUs' readings, and where NVML saw each pid:
// the rank -> GPU mapping's last resort). The file is rewritten whole (a temporary file renamed
// over it: a reader sees the old table or the new one) at most once a second (of the steps'
// arrival times and the samples' wall times) while a rank is attached, and at once when a
// process leaves; it is made 0600 in the socket's private folder, and removed by close() (an
// agent that died leaves it behind: readers judge it by its age). Write errors are kept quiet:
// the table is a view, and the next write tries again.
//
// Thread-safety: the step calls come one at a time (the agent's thread), the sample calls from
// the sampler's thread; one mutex keeps the table, another the file.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "gpu/gpu_types.h"
#include "sampler/sample_sink.h"
#include "training/rank_device.h"
#include "training/rank_memory.h"
#include "training/training_types.h"

namespace gpumon::node {

class RankMemoryFile final : public training::StepSink, public SampleSink {
 public:
  explicit RankMemoryFile(std::string path) : path_(std::move(path)) {}
  ~RankMemoryFile() override { close(); }

  /// The node's GPUs, for placing each rank (none: ranks go unplaced).
  void set_devices(const std::vector<DeviceStatic>& devices);

  void on_step(const training::Step& step) override;
  void on_rank_event(const training::RankEvent& event) override;
  void on_tick(const TickSample& tick) override;
  void on_event(const GpuEvent&) override {}
  void on_processes(const ProcessSnapshot& snapshot) override;
  /// Removes the file. Idempotent.
  void close();

  /// The table as the next write would publish it (tests).
  training::RankMemoryTable table(std::int64_t written_ms) const;

 private:
  /// Writes when a second has passed since the last write (`now_ms`: the caller's wall clock)
  /// and a rank is attached; `now`: at once, whatever the table.
  void write_if_due(std::int64_t now_ms);
  void write(std::int64_t now_ms, bool now);

  std::string path_;
  std::vector<training::GpuIdentity> gpus_;
  mutable std::mutex mu_;
  std::map<std::int64_t, training::RankMemory> ranks_;  ///< by pid
  std::map<unsigned, training::GpuNow> readings_;       ///< by NVML index
  /// Where NVML saw each pid: GPU -> (pid -> memory used), the newest list of each GPU.
  std::map<unsigned, std::map<std::int64_t, std::uint64_t>> nvml_pids_;
  std::mutex write_mu_;  ///< guards the two below and the file (taken before mu_)
  std::int64_t last_write_ms_ = -1;
  bool wrote_ = false;  ///< the file at path_ is ours to remove
  bool closed_ = false;
};

}  // namespace gpumon::node
