// SPDX-License-Identifier: MIT
// ProcessWatcher: samples the CPU time and memory of every connected training process (and of
// its DataLoader workers) and the host's free memory once a second, and hands each sample to
// a StepSink (the node's StepFanout: the recording, the exporter, the live diagnoser). It
// learns the processes from the rank events it is given as a StepSink itself: a hello adds its
// process, a bye / disconnect / drop removes it.
//
// Its own thread does the reads, a few small /proc files per process (docs/PERFORMANCE.md,
// "Host memory and CPU"), so neither the sampler's NVML readers nor the agent's thread wait
// on /proc. It reads only a process that is itself at the other end of the agent socket (the
// hello's pid is the socket's `peer_pid`): a relay (the labelled-case replayer) or a rank in
// another pid namespace (a container) is not read, since the peer may not be the rank.
//
// Thread-safety: on_* from the agent's thread; start/stop/sample_once from one other thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "host/process_stats.h"
#include "training/training_types.h"

namespace gpumon::node {

class ProcessWatcher final : public training::StepSink {
 public:
  /// Reads through `proc` (/proc) and `cgroup` (/sys/fs/cgroup), which it keeps; hands samples
  /// to `out`, held weakly (the fanout that delivers to it holds the watcher).
  ProcessWatcher(std::weak_ptr<training::StepSink> out, std::shared_ptr<const host::ProcFiles> proc,
                 std::shared_ptr<const host::ProcFiles> cgroup,
                 host::ProcessStatsOptions options = host::ProcessStatsReader::system_options(),
                 std::chrono::milliseconds period = std::chrono::seconds(1));
  ~ProcessWatcher() override;  ///< stops

  void on_step(const training::Step& step) override { (void)step; }
  void on_rank_event(const training::RankEvent& event) override;

  void start();
  void stop();  ///< idempotent; no sample is handed on after it returns
  /// Reads every watched process once, stamped `now_ms`; what the thread does each period.
  void sample_once(std::int64_t now_ms);
  /// Processes watched now.
  std::size_t watched() const;

 private:
  void run();

  std::weak_ptr<training::StepSink> out_;
  std::shared_ptr<const host::ProcFiles> proc_, cgroup_;
  host::ProcessStatsReader reader_;
  std::chrono::milliseconds period_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  struct Watched {
    std::optional<std::int64_t> rank;
    std::int64_t read_pid = 0;  // the pid in our namespace
  };
  std::map<std::int64_t, Watched> ranks_;  // by the hello's pid; guarded by mu_
  bool stopping_ = false;                  // guarded by mu_
  std::thread thread_;
};

}  // namespace gpumon::node
