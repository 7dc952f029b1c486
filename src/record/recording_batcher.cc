// SPDX-License-Identifier: MIT
#include "record/recording_batcher.h"

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include <cerrno>
#include <set>

namespace gpumon::record::detail {
namespace {

std::optional<std::int64_t> memory_of(const GpuProcess& p) {
  if (!p.used_memory_bytes) return std::nullopt;
  return static_cast<std::int64_t>(*p.used_memory_bytes);
}

// SQLite reports ENOSPC as SQLITE_FULL, but a write refused for the file-size limit
// (`ulimit -f`, EFBIG) or a failed fsync on a full disk as a plain I/O error without errno:
// look at the limit and the free space to tell them from a failing disk.
enum class OutOfSpace { kNo, kFileSizeLimit, kDiskFull };
OutOfSpace out_of_space(const std::string& path) {
  constexpr std::uint64_t kSlack = 64 * 1024;  // a WAL frame or two
  rlimit limit{};
  if (::getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    for (const char* suffix : {"", "-wal", "-journal"}) {
      struct stat st {};
      if (::stat((path + suffix).c_str(), &st) == 0 &&
          static_cast<std::uint64_t>(st.st_size) + kSlack >= limit.rlim_cur)
        return OutOfSpace::kFileSizeLimit;
    }
  }
  struct statvfs fs {};
  const std::string dir =
      path.find('/') == std::string::npos ? "." : path.substr(0, path.rfind('/') + 1);
  const bool full = ::statvfs(dir.c_str(), &fs) == 0 &&
                    static_cast<std::uint64_t>(fs.f_bavail) * fs.f_frsize < kSlack;
  return full ? OutOfSpace::kDiskFull : OutOfSpace::kNo;
}

}  // namespace

RecordingBatcher::RecordingBatcher(std::unique_ptr<RecordingStore> store,
                                   std::size_t chunk_max_ticks,
                                   std::chrono::milliseconds chunk_max_span, std::string path)
    : store_(std::move(store)),
      chunk_max_ticks_(std::min(std::max<std::size_t>(chunk_max_ticks, 1), kMaxChunkTicks)),
      chunk_max_span_ms_(chunk_max_span.count()),
      path_(std::move(path)) {}

std::string RecordingBatcher::write(const std::vector<TickSample>& ticks,
                                    const std::vector<GpuEvent>& events,
                                    const std::vector<ProcessSnapshot>& snapshots,
                                    const std::vector<training::Step>& steps,
                                    const std::vector<training::RankEvent>& rank_events,
                                    const std::vector<training::ProcessSample>& process_samples) {
  int rc = store_->begin();
  for (std::size_t i = 0; rc == SQLITE_OK && i < ticks.size(); ++i) rc = add_tick(ticks[i]);
  for (std::size_t i = 0; rc == SQLITE_OK && i < events.size(); ++i) {
    rc = store_->put_event(recorded_event(events[i]));
  }
  for (std::size_t i = 0; rc == SQLITE_OK && i < snapshots.size(); ++i)
    rc = add_processes(snapshots[i]);
  for (std::size_t i = 0; rc == SQLITE_OK && i < steps.size(); ++i) rc = store_->put_step(steps[i]);
  for (std::size_t i = 0; rc == SQLITE_OK && i < rank_events.size(); ++i)
    rc = store_->put_rank_event(rank_events[i]);
  for (std::size_t i = 0; rc == SQLITE_OK && i < process_samples.size(); ++i)
    rc = store_->put_process_sample(process_samples[i]);
  for (auto it = chunks_.begin(); rc == SQLITE_OK && it != chunks_.end(); ++it)
    if (it->second.dirty) rc = flush_chunk(it->first, it->second, false);
  if (rc == SQLITE_OK) rc = store_->commit();
  if (rc != SQLITE_OK) return failure(rc, "recording stopped");
  ticks_committed_ += ticks.size();
  steps_committed_ += steps.size();
  if (!ticks.empty()) last_committed_ms_ = last_tick_ms_;
  return {};
}

int RecordingBatcher::add_tick(const TickSample& tick) {
  for (const auto& s : tick.gpus) {
    const auto wall = s.wall_time.time_since_epoch().count() != 0 ? s.wall_time : tick.wall_time;
    const std::int64_t ms = to_unix_ms(wall);
    OpenChunk& c = chunks_[s.index];
    if (!c.builder.empty() && (c.builder.ticks() >= chunk_max_ticks_ ||
                               ms - c.builder.first_time_ms() >= chunk_max_span_ms_)) {
      if (int rc = flush_chunk(s.index, c, true); rc != SQLITE_OK) return rc;
      c.builder.clear();
      c.row_id = 0;
    }
    c.builder.append(ms, s);
    c.dirty = true;
    last_tick_ms_ = std::max(last_tick_ms_, ms);
  }
  return SQLITE_OK;
}

int RecordingBatcher::flush_chunk(unsigned gpu, OpenChunk& c, bool final) {
  const auto blob = c.builder.encode(final);
  const int rc =
      store_->put_chunk(gpu, c.row_id, c.builder.first_time_ms(), c.builder.last_time_ms(),
                        static_cast<std::int64_t>(c.builder.ticks()), blob);
  if (rc == SQLITE_OK) c.dirty = false;
  return rc;
}

int RecordingBatcher::add_processes(const ProcessSnapshot& snapshot) {
  const std::int64_t ms = to_unix_ms(snapshot.wall_time);
  std::set<unsigned> present;
  for (const auto& p : snapshot.processes) {
    present.insert(p.pid);
    auto [it, fresh] = processes_.try_emplace({snapshot.gpu, p.pid});
    RecordedProcess& row = it->second.row;
    const auto mem = memory_of(p);
    if (fresh) {
      row.gpu = snapshot.gpu;
      row.pid = p.pid;
      row.first_seen_ms = ms;
      row.max_used_memory_bytes = mem;
    } else if (mem && (!row.max_used_memory_bytes || *mem > *row.max_used_memory_bytes)) {
      row.max_used_memory_bytes = mem;
    }
    if (p.name) row.name = *p.name;
    if (!p.job.empty()) row.job = p.job;
    row.last_used_memory_bytes = mem;
    row.last_seen_ms = ms;
    if (int rc = store_->put_process(row, it->second.row_id); rc != SQLITE_OK) return rc;
  }
  // A process gone from its GPU's list ends its row; if the pid comes back, it gets a new one.
  for (auto it = processes_.begin(); it != processes_.end();) {
    if (it->first.first == snapshot.gpu && !present.contains(it->first.second))
      it = processes_.erase(it);
    else
      ++it;
  }
  return SQLITE_OK;
}

std::string RecordingBatcher::failure(int rc, std::string_view what) {
  const std::string sqlite_message = store_->message();
  const int err = store_->system_errno();
  store_->rollback();
  const OutOfSpace space = out_of_space(path_);
  const bool io = (rc & 0xFF) == SQLITE_IOERR;
  const bool limit = io && (err == EFBIG || space == OutOfSpace::kFileSizeLimit);
  const bool full = (rc & 0xFF) == SQLITE_FULL ||
                    (io && (err == ENOSPC || err == EDQUOT || space == OutOfSpace::kDiskFull));
  const std::string when =
      last_committed_ms_ != 0 ? format_iso_ms(last_committed_ms_) : std::string("its start");
  const char* kind = limit  ? "file size limit (ulimit -f) reached: "
                     : full ? "disk full: "
                            : "write error: ";
  return std::string(kind) + std::string(what) + " at " + when + " (" + path_ + ": " +
         sqlite_message + ")";
}

std::string RecordingBatcher::finish(const std::vector<std::pair<std::string, std::string>>& meta) {
  const int rc = store_->finish(to_unix_ms(std::chrono::system_clock::now()), meta);
  if (rc != SQLITE_OK) return failure(rc, "closing the recording failed");
  return {};
}

}  // namespace gpumon::record::detail
