// SPDX-License-Identifier: MIT
#include "cli/rank_rows.h"

#include <signal.h>

#include <algorithm>
#include <cerrno>

#include "agent/socket_path.h"
#include "training/rank_device.h"
#include "util/small_file.h"

namespace gpumon::cli {
namespace {

// The table is a few hundred bytes a rank: more than this is not ours.
constexpr std::size_t kMaxTableBytes = 4 << 20;

// The table, when `path` is a regular file of this user: another user who can write in the
// folder (a /tmp fallback) could put rows of their own, or a FIFO that would never answer.
std::optional<std::string> read_table_file(const std::string& path) {
  auto file =
      util::read_small_file(path, kMaxTableBytes, {.follow_links = false, .owner_only = true});
  if (!file || file->more) return std::nullopt;
  return std::move(file->text);
}

}  // namespace

std::string rank_memory_file(const std::optional<std::string>& env_socket) {
  return agent::rank_memory_path(env_socket && !env_socket->empty() ? *env_socket
                                                                    : agent::default_socket_path());
}

void set_ranks(Snapshot& snap, const training::RankMemoryTable& table, std::int64_t now_ms,
               const std::function<bool(std::int64_t)>& alive) {
  std::vector<DeviceStatic> devices;
  for (const GpuSnapshot& g : snap.gpus) devices.push_back(g.info);
  const auto gpus = training::gpu_identities(devices);
  snap.ranks.clear();
  for (const training::RankMemory& r : table.ranks) {
    if (!alive(r.pid)) continue;
    // Where NVML saw the pid hold the most memory: the mapping's last resort.
    std::optional<unsigned> nvml_gpu;
    std::uint64_t most = 0;
    for (const ProcessRow& p : snap.processes)
      if (static_cast<std::int64_t>(p.gpu.pid) == r.pid &&
          (!nvml_gpu || p.gpu.used_memory_bytes.value_or(0) > most))
        nvml_gpu = p.gpu.gpu_index, most = p.gpu.used_memory_bytes.value_or(0);
    const auto device = r.device ? r.device : (r.hello ? r.hello->device : std::nullopt);
    RankRow row;
    // The node's placement when it made one (its sampler saw the GPUs), else the same mapping
    // over this snapshot's GPUs.
    row.gpu = r.gpu ? r.gpu
                    : training::map_rank_device(
                          device ? std::optional<std::string_view>(*device) : std::nullopt,
                          r.hello ? &*r.hello : nullptr, gpus, nvml_gpu)
                          .gpu;
    row.pid = r.pid;
    row.rank = r.rank;
    row.step = r.step;
    row.allocated_bytes = r.allocated_bytes;
    row.reserved_bytes = r.reserved_bytes;
    row.step_s = r.step_s, row.data_wait_s = r.data_wait_s;
    row.age_s = std::max<double>(0, static_cast<double>(now_ms - r.time_ms) / 1000.0);
    snap.ranks.push_back(row);
  }
  std::sort(snap.ranks.begin(), snap.ranks.end(), [](const RankRow& a, const RankRow& b) {
    const unsigned ga = a.gpu.value_or(~0U), gb = b.gpu.value_or(~0U);
    if (ga != gb) return ga < gb;
    if (a.rank != b.rank) return a.rank < b.rank;
    return a.pid < b.pid;
  });
}

void add_ranks(Snapshot& snap, const std::string& path, std::chrono::system_clock::time_point now) {
  const auto text = read_table_file(path);
  if (!text) return;
  std::string error;
  const auto table = training::parse_rank_memory(*text, error);
  if (!table) return;
  const std::int64_t now_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  set_ranks(snap, *table, now_ms, [](std::int64_t pid) {
    return pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM);
  });
}

}  // namespace gpumon::cli
