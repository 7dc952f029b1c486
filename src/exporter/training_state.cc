// SPDX-License-Identifier: MIT
#include "exporter/training_state.h"

#include <algorithm>
#include <cmath>

#include "training/protocol.h"
#include "training/rank_device.h"

namespace gpumon::exporter {
namespace {

std::shared_ptr<Clock> or_steady(std::shared_ptr<Clock> clock) {
  return clock ? std::move(clock) : std::make_shared<SteadyClock>();
}

double seconds(MonoClock::duration d) {
  return std::chrono::duration<double>(d).count();
}

}  // namespace

TrainingState::TrainingState(std::shared_ptr<Clock> clock) : clock_(or_steady(std::move(clock))) {}

TrainingState::Entry* TrainingState::entry_locked(std::int64_t pid, MonoClock::time_point now) {
  if (auto it = entries_.find(pid); it != entries_.end()) return &it->second;
  if (entries_.size() >= kMaxRanks) {
    expire_locked(now);
    auto oldest = entries_.end();
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->second.disconnected_at &&
          (oldest == entries_.end() ||
           *it->second.disconnected_at < *oldest->second.disconnected_at))
        oldest = it;
    }
    if (oldest == entries_.end()) {
      ++untracked_;
      return nullptr;
    }
    entries_.erase(oldest);
  }
  Entry& e = entries_[pid];
  e.rank.pid = pid;
  return &e;
}

void TrainingState::expire_locked(MonoClock::time_point now) {
  std::erase_if(entries_, [&](const auto& kv) {
    return kv.second.disconnected_at && now - *kv.second.disconnected_at > kStaleAfter;
  });
}

void TrainingState::on_step(const training::Step& s) noexcept {
  try {
    const MonoClock::time_point now = clock_->now();
    std::lock_guard lock(mutex_);
    Entry* e = entry_locked(s.pid, now);
    if (e == nullptr) return;
    TrainingRank& r = e->rank;
    if (s.rank) r.rank = s.rank;
    if (s.local_rank) r.local_rank = s.local_rank;
    if (s.world_size) r.world_size = s.world_size;
    if (s.device) r.device = s.device;
    ++r.steps;
    r.last_step = s.step;
    r.step_seconds_sum += s.cpu_step_s;
    const auto bound = std::lower_bound(kStepSecondsBuckets.begin(), kStepSecondsBuckets.end(),
                                        s.cpu_step_s);  // le: a step of exactly 1 s is in "1"
    ++r.step_seconds_buckets[static_cast<std::size_t>(bound - kStepSecondsBuckets.begin())];
    r.last_step_unix_s = static_cast<double>(s.received_ms) / 1000.0;
    r.last_step_seconds = s.cpu_step_s;
    if (s.data_wait_s)
      r.data_wait_seconds_sum = r.data_wait_seconds_sum.value_or(0) + *s.data_wait_s;
    if (s.gpu_step_s) {
      ++r.gpu_steps;
      r.gpu_step_seconds_sum += *s.gpu_step_s;
      r.last_gpu_step_seconds = s.gpu_step_s;
    }
    if (s.allocated_bytes) r.allocated_bytes = s.allocated_bytes;
    if (s.reserved_bytes) r.reserved_bytes = s.reserved_bytes;
    if (s.inactive_split_bytes) r.inactive_split_bytes = s.inactive_split_bytes;
    if (s.num_alloc_retries) r.alloc_retries = s.num_alloc_retries;
    if (s.num_ooms) r.ooms = s.num_ooms;
    e->last_step_at = now;
    e->window.push_back({s.t_end_s, s.cpu_step_s, s.data_wait_s});
    if (e->window.size() > kRateWindow) e->window.pop_front();
    generation_.fetch_add(1, std::memory_order_release);
  } catch (...) {  // an allocation failure loses this step only
    return;
  }
  try {
    history_.add(s);  // outside mutex_: a history read never holds up the rank's figures
  } catch (...) {
  }
}

void TrainingState::on_rank_event(const training::RankEvent& ev) noexcept {
  try {
    const MonoClock::time_point now = clock_->now();
    std::lock_guard lock(mutex_);
    if (ev.kind == "hello") {
      entries_.erase(ev.pid);  // a reused pid starts afresh
      history_.forget(ev.pid);
      Entry* e = entry_locked(ev.pid, now);
      if (e == nullptr) return;
      e->rank.rank = ev.rank;
      e->hello = ev.hello;
      if (ev.hello) {
        e->rank.local_rank = ev.hello->local_rank;
        e->rank.world_size = ev.hello->world_size;
        e->rank.device = ev.hello->device;
        e->rank.pci_bus_id = ev.hello->pci_bus_id;
        e->rank.job = ev.hello->job;
      }
    } else if (ev.kind == "device") {  // the device it resolved after its hello
      auto it = entries_.find(ev.pid);
      if (it == entries_.end() || !ev.hello) return;
      it->second.hello = ev.hello;
      it->second.rank.device = ev.hello->device;
      it->second.rank.pci_bus_id = ev.hello->pci_bus_id;
    } else if (ev.left()) {
      auto it = entries_.find(ev.pid);
      if (it == entries_.end()) return;
      if (it->second.rank.connected) {
        it->second.rank.connected = false;
        it->second.rank.lost = ev.kind != "bye";
        it->second.disconnected_at = now;
      }
    } else if (const auto a = training::action_of(ev)) {
      auto it = entries_.find(ev.pid);  // only processes that said hello
      if (it == entries_.end()) return;
      TrainingRank& r = it->second.rank;
      const bool known = r.actions.count(a->action) > 0 || r.actions.size() < kMaxActionNames;
      ++r.actions[known ? a->action : std::string("other")];
      if (a->micro_batch_size) r.micro_batch_size = a->micro_batch_size;
      if (a->num_workers) r.loader_workers = a->num_workers;
    } else {
      return;  // "oom": the step's num_ooms carries the count
    }
    generation_.fetch_add(1, std::memory_order_release);
  } catch (...) {
  }
}

void TrainingState::on_process_sample(const training::ProcessSample& s) noexcept {
  try {
    std::lock_guard lock(mutex_);
    host_ = {s.mem_available_bytes, s.mem_total_bytes, s.cgroup_limit_bytes, s.cgroup_usage_bytes};
    auto it = entries_.find(s.pid);  // only processes that said hello: no entry made here
    if (it != entries_.end()) {
      TrainingRank& r = it->second.rank;
      r.cpu_seconds = s.cpu_s;
      r.pss_bytes = s.pss_bytes, r.rss_bytes = s.rss_bytes, r.pss_is_rss = s.pss_is_rss;
      r.workers = s.workers;
      r.workers_pss_bytes = s.workers_pss_bytes;
    }
    generation_.fetch_add(1, std::memory_order_release);
  } catch (...) {
  }
}

TrainingSnapshot TrainingState::snapshot(const std::vector<DeviceStatic>& devices) {
  const MonoClock::time_point now = clock_->now();
  TrainingSnapshot out;
  {
    std::lock_guard lock(mutex_);
    const std::size_t before = entries_.size();
    expire_locked(now);
    if (entries_.size() != before) generation_.fetch_add(1, std::memory_order_release);
    out.untracked = untracked_;
    out.host = host_;
    out.ranks.reserve(entries_.size());
    const std::vector<training::GpuIdentity> gpus = training::gpu_identities(devices);
    for (const auto& [pid, e] : entries_) {
      TrainingRank r = e.rank;
      r.gpu = training::map_rank_device(r.device, e.hello ? &*e.hello : nullptr, gpus).gpu;
      if (e.last_step_at) r.last_step_age_s = seconds(now - *e.last_step_at);
      if (e.disconnected_at) r.disconnected_for_s = seconds(now - *e.disconnected_at);
      if (e.window.size() >= 2) {
        const auto [lo, hi] = std::minmax_element(
            e.window.begin(), e.window.end(),
            [](const Arrival& a, const Arrival& b) { return a.t_end_s < b.t_end_s; });
        const double span = hi->t_end_s - lo->t_end_s;
        if (std::isfinite(span) && span > 0)
          r.steps_per_second = static_cast<double>(e.window.size() - 1) / span;
        training::WaitTally wait;
        for (const Arrival& a : e.window) wait.add(a.step_s, a.data_wait_s);
        r.data_wait_share = wait.share();
      }
      out.ranks.push_back(std::move(r));
    }
  }
  std::stable_sort(
      out.ranks.begin(), out.ranks.end(), [](const TrainingRank& a, const TrainingRank& b) {
        return std::pair(a.rank.value_or(-1), a.pid) < std::pair(b.rank.value_or(-1), b.pid);
      });
  return out;
}

}  // namespace gpumon::exporter
