// SPDX-License-Identifier: MIT
// StepShares: which training steps the recording's queue takes while it waits for the next
// commit, so that one process flooding steps loses only its own. The queue holds at most
// `capacity` steps; each training process may hold at most its share, capacity divided by the
// processes present (those that said hello and have not left, and any other that sent a step
// since the last commit). A step over its process's share, or over the capacity, is refused
// and counted against that process; take_losses() turns the counts into `steps_lost` rank
// events naming it, which the recording keeps beside the steps (docs/recording.md).
//
// Thread-safety: none; the writer calls it under its queue's mutex.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "training/training_types.h"

namespace gpumon::record::detail {

class StepShares {
 public:
  explicit StepShares(std::size_t capacity) : capacity_(capacity) {}

  /// Whether the queue takes this step of process `pid` (counted as queued when it does, and
  /// as lost for `pid` when not).
  bool admit(const training::Step& step);
  /// A hello makes its process present; a bye, disconnect or drop ends that.
  void on_rank_event(const training::RankEvent& event);
  /// The queue was handed to the writer: nothing is queued any more.
  void on_taken();
  /// `steps_lost` events at `time_ms`, detail {"steps": N, "reason": "..."}: one per process
  /// that lost steps and was last reported kLossReportMs ago or more (a process flooding for
  /// hours adds one event every 10 s, not one per commit), or every such process when `final`.
  std::vector<training::RankEvent> take_losses(std::int64_t time_ms, bool final);

  std::size_t queued() const { return queued_total_; }
  /// The most one of `processes` present processes may queue.
  std::size_t share(std::size_t processes) const;

 private:
  static constexpr std::int64_t kLossReportMs = 10'000;

  struct Loss {
    std::optional<std::int64_t> rank;
    std::uint64_t over_share = 0;             // refused at its share while the queue had room
    std::uint64_t queue_full = 0;             // refused because the whole queue was full
    std::size_t share = 0;                    // its share when last refused
    std::optional<std::int64_t> reported_ms;  // the last steps_lost event
  };

  std::size_t capacity_;
  std::size_t queued_total_ = 0;
  std::size_t queued_absent_ = 0;             // processes with steps queued that are not present_
  std::unordered_set<std::int64_t> present_;  // hello'd, not gone
  std::unordered_map<std::int64_t, std::size_t> queued_;  // per pid, since the last take
  std::unordered_map<std::int64_t, Loss> losses_;         // per pid that lost steps
};

}  // namespace gpumon::record::detail
