// SPDX-License-Identifier: MIT
#include "record/step_shares.h"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace gpumon::record::detail {

std::size_t StepShares::share(std::size_t processes) const {
  return capacity_ / std::max<std::size_t>(processes, 1);
}

bool StepShares::admit(const training::Step& step) {
  auto [it, fresh] = queued_.try_emplace(step.pid, 0);
  if (fresh && !present_.contains(step.pid)) ++queued_absent_;
  // Present: the hello'd processes and every process with steps queued (this one included).
  const std::size_t its_share = share(present_.size() + queued_absent_);
  if (queued_total_ < capacity_ && it->second < its_share) {
    ++it->second;
    ++queued_total_;
    return true;
  }
  Loss& loss = losses_[step.pid];
  if (step.rank) loss.rank = step.rank;
  loss.share = its_share;
  ++(queued_total_ >= capacity_ ? loss.queue_full : loss.over_share);
  return false;
}

void StepShares::on_rank_event(const training::RankEvent& event) {
  const bool queued = queued_.contains(event.pid);
  if (event.kind == "hello") {
    if (present_.insert(event.pid).second && queued) --queued_absent_;
  } else if (event.left()) {
    if (present_.erase(event.pid) != 0 && queued) ++queued_absent_;
  }
}

void StepShares::on_taken() {
  queued_.clear();
  queued_total_ = 0;
  queued_absent_ = 0;
}

std::vector<training::RankEvent> StepShares::take_losses(std::int64_t time_ms, bool final) {
  std::vector<training::RankEvent> events;
  for (auto it = losses_.begin(); it != losses_.end();) {
    Loss& loss = it->second;
    const std::uint64_t steps = loss.over_share + loss.queue_full;
    const bool due = final || !loss.reported_ms || time_ms - *loss.reported_ms >= kLossReportMs;
    if (!due) {
      ++it;
      continue;
    }
    if (steps == 0) {  // nothing lost since it was last reported, for a period: forgotten
      it = losses_.erase(it);
      continue;
    }
    const std::string reason =
        loss.over_share >= loss.queue_full
            ? "it sent more steps than its share of the recording queue (" +
                  std::to_string(loss.share) +
                  " between two commits): the other processes' steps were kept"
            : "the recording queue was full (" + std::to_string(capacity_) +
                  " steps between two commits): the disk or the writer did not keep up";
    const nlohmann::json detail = {{"steps", steps}, {"reason", reason}};
    events.push_back({time_ms, it->first, loss.rank, "steps_lost", detail.dump(), std::nullopt});
    loss.over_share = loss.queue_full = 0;
    loss.reported_ms = time_ms;
    ++it;
  }
  std::sort(
      events.begin(), events.end(),
      [](const training::RankEvent& a, const training::RankEvent& b) { return a.pid < b.pid; });
  return events;
}

}  // namespace gpumon::record::detail
