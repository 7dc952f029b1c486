// SPDX-License-Identifier: MIT
#include "node/process_watcher.h"

#include <utility>
#include <vector>

namespace gpumon::node {

ProcessWatcher::ProcessWatcher(std::weak_ptr<training::StepSink> out,
                               std::shared_ptr<const host::ProcFiles> proc,
                               std::shared_ptr<const host::ProcFiles> cgroup,
                               host::ProcessStatsOptions options, std::chrono::milliseconds period)
    : out_(std::move(out)),
      proc_(std::move(proc)),
      cgroup_(std::move(cgroup)),
      reader_(*proc_, *cgroup_, options),
      period_(period) {}

ProcessWatcher::~ProcessWatcher() {
  stop();
}

void ProcessWatcher::on_rank_event(const training::RankEvent& event) {
  std::lock_guard lock(mu_);
  // Only a process that is itself at the other end of the socket: a relay (the labelled-case
  // replayer, a proxy) or another pid namespace may put an unrelated process there, whose
  // memory would read as the rank's.
  if (event.kind == "hello" && (event.peer_pid <= 0 || event.peer_pid == event.pid))
    ranks_[event.pid] = {event.rank, event.pid};
  else if (event.left())
    ranks_.erase(event.pid);
}

std::size_t ProcessWatcher::watched() const {
  std::lock_guard lock(mu_);
  return ranks_.size();
}

void ProcessWatcher::sample_once(std::int64_t now_ms) {
  std::vector<std::pair<std::int64_t, Watched>> pids;
  {
    std::lock_guard lock(mu_);
    pids.assign(ranks_.begin(), ranks_.end());
  }
  std::optional<host::HostMemory> host;  // read once per period: the same for every process
  for (const auto& [pid, w] : pids) {
    const auto tree = reader_.read_tree(w.read_pid);
    if (!tree) continue;  // gone
    if (!host) host = reader_.read_host(w.read_pid);
    training::ProcessSample s;
    s.time_ms = now_ms, s.pid = pid, s.rank = w.rank;
    s.cpu_s = tree->self.cpu_s;
    s.rss_bytes = tree->self.rss_bytes, s.pss_bytes = tree->self.pss_bytes;
    s.pss_is_rss = tree->self.pss_is_rss || tree->workers_pss_is_rss;
    s.workers = tree->workers;
    s.workers_cpu_s = tree->workers_cpu_s;
    s.workers_pss_bytes = tree->workers_pss_bytes;
    s.mem_available_bytes = host->mem_available_bytes, s.mem_total_bytes = host->mem_total_bytes;
    s.cgroup_limit_bytes = host->cgroup_limit_bytes;
    s.cgroup_usage_bytes = host->cgroup_usage_bytes;
    if (const auto out = out_.lock()) out->on_process_sample(s);
  }
}

void ProcessWatcher::start() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] { run(); });
}

void ProcessWatcher::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void ProcessWatcher::run() {
  auto next = std::chrono::steady_clock::now() + period_;
  while (true) {
    {
      std::unique_lock lock(mu_);
      if (wake_.wait_until(lock, next, [this] { return stopping_; })) return;
    }
    next += period_;
    const auto now = std::chrono::steady_clock::now();
    if (next < now) next = now + period_;  // fell behind (a suspended machine): no burst
    sample_once(std::chrono::duration_cast<std::chrono::milliseconds>(
                    std::chrono::system_clock::now().time_since_epoch())
                    .count());
  }
}

}  // namespace gpumon::node
