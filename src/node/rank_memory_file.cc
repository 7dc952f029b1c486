// SPDX-License-Identifier: MIT
#include "node/rank_memory_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>

namespace gpumon::node {
namespace {

constexpr std::int64_t kWriteIntervalMs = 1000;

}  // namespace

std::string rank_memory_path(const std::string& socket_path) {
  return socket_path + ".ranks.json";
}

void RankMemoryFile::on_step(const training::Step& step) {
  training::RankMemory& r = ranks_[step.pid];
  r.pid = step.pid;
  if (step.rank) r.rank = step.rank;
  if (step.device) r.device = step.device;
  r.step = step.step;
  r.time_ms = step.received_ms;
  // A step without allocator fields (not read this step) keeps the last ones known.
  if (step.allocated_bytes) r.allocated_bytes = step.allocated_bytes;
  if (step.reserved_bytes) r.reserved_bytes = step.reserved_bytes;
  if (last_write_ms_ < 0 || step.received_ms - last_write_ms_ >= kWriteIntervalMs ||
      step.received_ms < last_write_ms_)  // the wall clock went back
    write(step.received_ms);
}

void RankMemoryFile::on_rank_event(const training::RankEvent& event) {
  if (event.carries_hello() && event.hello) {
    training::RankMemory& r = ranks_[event.pid];
    r.pid = event.pid;
    if (event.rank) r.rank = event.rank;
    r.hello = event.hello;
    if (r.time_ms == 0) r.time_ms = event.time_ms;
  } else if (event.left() && ranks_.erase(event.pid) > 0) {
    write(event.time_ms);
  }
}

training::RankMemoryTable RankMemoryFile::table(std::int64_t written_ms) const {
  training::RankMemoryTable t;
  t.written_ms = written_ms;
  for (const auto& [pid, r] : ranks_) t.ranks.push_back(r);
  return t;
}

void RankMemoryFile::write(std::int64_t now_ms) {
  if (closed_ || path_.empty()) return;
  last_write_ms_ = now_ms;
  const std::string text = training::rank_memory_json(table(now_ms)) + "\n";
  const std::string tmp = path_ + ".tmp";
  ::unlink(tmp.c_str());  // O_EXCL below: never write through a file or link put there
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return;
  const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  if (!written || std::rename(tmp.c_str(), path_.c_str()) != 0) ::unlink(tmp.c_str());
}

void RankMemoryFile::close() {
  if (closed_) return;
  closed_ = true;
  if (!path_.empty()) ::unlink(path_.c_str());
}

}  // namespace gpumon::node
