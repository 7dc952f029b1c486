// SPDX-License-Identifier: MIT
#include "node/rank_memory_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>

namespace gpumon::node {
namespace {

constexpr std::int64_t kWriteIntervalMs = 1000;

}  // namespace

void RankMemoryFile::set_devices(const std::vector<DeviceStatic>& devices) {
  std::lock_guard lock(mu_);
  gpus_ = training::gpu_identities(devices);
}

void RankMemoryFile::on_step(const training::Step& step) {
  std::unique_lock lock(mu_);
  training::RankMemory& r = ranks_[step.pid];
  r.pid = step.pid;
  if (step.rank) r.rank = step.rank;
  if (step.device) r.device = step.device;
  r.step = step.step;
  r.time_ms = step.received_ms;
  r.step_s = step.cpu_step_s, r.data_wait_s = step.data_wait_s;
  // A step without allocator fields (not read this step) keeps the last ones known.
  if (step.allocated_bytes) r.allocated_bytes = step.allocated_bytes;
  if (step.reserved_bytes) r.reserved_bytes = step.reserved_bytes;
  lock.unlock();
  write_if_due(step.received_ms);
}

void RankMemoryFile::on_rank_event(const training::RankEvent& event) {
  std::unique_lock lock(mu_);
  if (event.carries_hello() && event.hello) {
    training::RankMemory& r = ranks_[event.pid];
    r.pid = event.pid;
    if (event.rank) r.rank = event.rank;
    r.hello = event.hello;
    if (r.time_ms == 0) r.time_ms = event.time_ms;
  } else if (event.left() && ranks_.erase(event.pid) > 0) {
    lock.unlock();
    write(event.time_ms, true);
  }
}

void RankMemoryFile::on_tick(const TickSample& tick) {
  {
    std::lock_guard lock(mu_);
    for (const DeviceSample& g : tick.gpus) {
      training::GpuNow& now = readings_[g.index];
      now.index = g.index;
      now.util_pct = g.utilization_gpu_pct ? std::optional(*g.utilization_gpu_pct) : std::nullopt;
      now.temperature_c = g.temperature_gpu_c ? std::optional(*g.temperature_gpu_c) : std::nullopt;
    }
  }
  // The GPUs' readings stay fresh between slow steps (and the ranks placed once the GPUs are
  // known): a rewrite a second while any rank is attached.
  write_if_due(
      std::chrono::duration_cast<std::chrono::milliseconds>(tick.wall_time.time_since_epoch())
          .count());
}

void RankMemoryFile::on_processes(const ProcessSnapshot& snapshot) {
  std::lock_guard lock(mu_);
  auto& pids = nvml_pids_[snapshot.gpu];
  pids.clear();
  for (const GpuProcess& p : snapshot.processes) pids[p.pid] = p.used_memory_bytes.value_or(0);
}

training::RankMemoryTable RankMemoryFile::table(std::int64_t written_ms) const {
  std::lock_guard lock(mu_);
  training::RankMemoryTable t;
  t.written_ms = written_ms;
  for (const auto& [pid, rank] : ranks_) {
    training::RankMemory r = rank;
    std::optional<unsigned> nvml_gpu;  // where NVML saw the pid hold the most memory
    std::uint64_t most = 0;
    for (const auto& [gpu, pids] : nvml_pids_)
      if (const auto it = pids.find(pid); it != pids.end() && (!nvml_gpu || it->second > most))
        nvml_gpu = gpu, most = it->second;
    const auto device = r.device ? r.device : (r.hello ? r.hello->device : std::nullopt);
    r.gpu =
        training::map_rank_device(device ? std::optional<std::string_view>(*device) : std::nullopt,
                                  r.hello ? &*r.hello : nullptr, gpus_, nvml_gpu)
            .gpu;
    t.ranks.push_back(std::move(r));
  }
  for (const auto& [index, now] : readings_) t.gpus.push_back(now);
  return t;
}

void RankMemoryFile::write_if_due(std::int64_t now_ms) {
  write(now_ms, false);
}

void RankMemoryFile::write(std::int64_t now_ms, bool now) {
  std::lock_guard lock(write_mu_);  // the agent's and the sampler's threads both write
  if (closed_ || path_.empty()) return;
  // Due a second after the last write. The steps' arrival times and the ticks' start times
  // interleave a few ms apart: only a jump back of more than a second (the wall clock was set)
  // counts as due.
  if (!now && last_write_ms_ >= 0 && now_ms - last_write_ms_ < kWriteIntervalMs &&
      last_write_ms_ - now_ms <= kWriteIntervalMs)
    return;
  {
    std::lock_guard data(mu_);
    if (ranks_.empty() && !now) return;  // nobody attached: nothing to publish
  }
  last_write_ms_ = now_ms;
  const std::string text = training::rank_memory_json(table(now_ms)) + "\n";
  const std::string tmp = path_ + ".tmp";
  ::unlink(tmp.c_str());  // O_EXCL below: never write through a file or link put there
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return;
  const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  if (!written || std::rename(tmp.c_str(), path_.c_str()) != 0)
    ::unlink(tmp.c_str());
  else
    wrote_ = true;
}

void RankMemoryFile::close() {
  std::lock_guard lock(write_mu_);
  if (closed_) return;
  closed_ = true;
  // Only a file this node wrote: one that lost the socket to a running agent leaves that
  // agent's file alone.
  if (wrote_) ::unlink(path_.c_str());
}

}  // namespace gpumon::node
