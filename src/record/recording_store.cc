// SPDX-License-Identifier: MIT
#include "record/recording_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "record/schema.h"
#include "training/job_json.h"

namespace gpumon::record::detail {
namespace {

int step_done(Stmt& s) {
  const int rc = s.step();
  s.reset();
  return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

int insert_devices(Db& db, const std::vector<RecordedDevice>& devices) {
  auto s = db.prepare(
      "INSERT INTO devices(gpu, name, uuid, pci_bus_id, memory_total_bytes, max_sm_clock_mhz, "
      "max_mem_clock_mhz, max_graphics_clock_mhz) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
  for (const auto& d : devices) {
    s.bind(1, static_cast<std::int64_t>(d.index)).bind(2, d.name).bind(3, d.uuid);
    s.bind(4, d.pci_bus_id).bind(5, d.memory_total_bytes).bind(6, d.max_sm_clock_mhz);
    s.bind(7, d.max_mem_clock_mhz).bind(8, d.max_graphics_clock_mhz);
    if (int rc = step_done(s); rc != SQLITE_OK) return rc;
  }
  return SQLITE_OK;
}

}  // namespace

RecordingStore::RecordingStore(Db db) : db_(std::move(db)) {}

std::unique_ptr<RecordingStore> RecordingStore::create(const std::string& path, bool overwrite,
                                                       const RunInfo& run, std::int64_t start_ms,
                                                       const std::vector<RecordedDevice>& devices,
                                                       std::string& error) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (!overwrite) {
      error = path + ": already exists (choose another name, or overwrite it with --force)";
      return nullptr;
    }
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) ::unlink((path + suffix).c_str());
  }
  // A recording holds command lines, user and process names: readable by its owner only. SQLite
  // would create it 0644 (less the umask); created 0600 here, its -wal and -shm files take the
  // same mode from it. O_EXCL | O_NOFOLLOW: never write through a file or link put in its place.
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    const int err = errno;
    const std::string cause = open_failure_cause(path, true);
    error = path + ": cannot create the recording: " + (cause.empty() ? std::strerror(err) : cause);
    return nullptr;
  }
  ::close(fd);
  Db db;
  if (db.open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, error) != SQLITE_OK) {
    error = path + ": cannot create the recording: " + error;
    return nullptr;
  }
  // Anyone may open the new file read-only between its creation and the schema (a `doctor` of
  // the live run, a script polling it): its shared lock makes the switch to WAL answer BUSY at
  // once unless SQLite waits. Once in WAL mode, readers never block this writer: the wait is
  // turned off again so that no later write waits on anyone.
  sqlite3_busy_timeout(db.get(), 2000);
  int rc = db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL");
  if (rc == SQLITE_OK) rc = create_schema(db);
  if (rc != SQLITE_OK) {
    error = path + ": cannot create the recording: " + db.message();
    return nullptr;
  }
  sqlite3_busy_timeout(db.get(), 0);
  std::unique_ptr<RecordingStore> store(new RecordingStore(std::move(db)));
  auto& s = *store;
  s.insert_chunk_ = s.db_.prepare(
      "INSERT INTO sample_chunks(gpu, first_time_ms, last_time_ms, ticks, data) "
      "VALUES (?, ?, ?, ?, ?)");
  s.update_chunk_ = s.db_.prepare(
      "UPDATE sample_chunks SET first_time_ms = ?, last_time_ms = ?, ticks = ?, data = ? "
      "WHERE id = ?");
  s.insert_event_ = s.db_.prepare("INSERT INTO events(gpu, time_ms, kind, value) VALUES (?,?,?,?)");
  s.insert_process_ = s.db_.prepare(
      "INSERT INTO processes(gpu, pid, name, max_used_memory_bytes, last_used_memory_bytes, "
      "first_seen_ms, last_seen_ms, job) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
  s.update_process_ = s.db_.prepare(
      "UPDATE processes SET name = ?, max_used_memory_bytes = ?, last_used_memory_bytes = ?, "
      "last_seen_ms = ?, job = ? WHERE id = ?");
  s.insert_step_ = s.db_.prepare(
      "INSERT INTO steps(received_ms, pid, rank, local_rank, world_size, device, step, t_start_s, "
      "t_end_s, cpu_step_s, gpu_step_s, data_wait_s, allocated_bytes, reserved_bytes, "
      "active_bytes, inactive_split_bytes, allocated_peak_bytes, reserved_peak_bytes, "
      "num_alloc_retries, num_ooms) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  s.insert_rank_event_ = s.db_.prepare(
      "INSERT INTO rank_events(time_ms, pid, rank, kind, detail) VALUES (?, ?, ?, ?, ?)");
  s.insert_process_sample_ = s.db_.prepare(
      "INSERT INTO process_samples(time_ms, pid, rank, cpu_s, rss_bytes, pss_bytes, pss_is_rss, "
      "workers, workers_cpu_s, workers_pss_bytes, mem_available_bytes, mem_total_bytes, "
      "cgroup_limit_bytes, cgroup_usage_bytes) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  s.set_meta_ = s.db_.prepare("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)");
  rc = s.begin();
  if (rc == SQLITE_OK) rc = insert_devices(s.db_, devices);
  const std::pair<const char*, std::string> meta[] = {
      {"schema_version", std::to_string(kSchemaVersion)},
      {"start_time", format_iso_ms(start_ms)},
      {"start_time_ms", std::to_string(start_ms)},
      {"hostname", run.hostname},
      {"gpumon_version", run.gpumon_version},
      {"command", run.command},
      {"driver_version", run.driver_version},
      {"simulated_scenario", run.simulated_scenario}};
  for (const auto& [key, value] : meta)
    if (rc == SQLITE_OK) rc = s.set_meta(key, value);
  if (rc == SQLITE_OK) rc = s.commit();
  if (rc != SQLITE_OK) {
    error = path + ": cannot create the recording: " + s.message();
    return nullptr;
  }
  (void)s.checkpoint();  // the main file alone is a gpumon recording from the start
  return store;
}

int RecordingStore::begin() {
  return db_.exec("BEGIN");
}

int RecordingStore::commit() {
  return db_.exec("COMMIT");
}

void RecordingStore::rollback() {
  if (!sqlite3_get_autocommit(db_.get())) db_.exec("ROLLBACK");
}

int RecordingStore::put_chunk(unsigned gpu, std::int64_t& row_id, std::int64_t first_ms,
                              std::int64_t last_ms, std::int64_t ticks,
                              std::span<const std::uint8_t> data) {
  if (row_id != 0) {
    update_chunk_.bind(1, first_ms).bind(2, last_ms).bind(3, ticks).bind(4, data).bind(5, row_id);
    return step_done(update_chunk_);
  }
  insert_chunk_.bind(1, static_cast<std::int64_t>(gpu)).bind(2, first_ms).bind(3, last_ms);
  insert_chunk_.bind(4, ticks).bind(5, data);
  const int rc = step_done(insert_chunk_);
  if (rc == SQLITE_OK) row_id = db_.last_insert_rowid();
  return rc;
}

int RecordingStore::put_event(const RecordedEvent& e) {
  insert_event_.bind(1, static_cast<std::int64_t>(e.gpu)).bind(2, e.time_ms);
  insert_event_.bind(3, std::string_view(e.kind)).bind(4, e.value);
  return step_done(insert_event_);
}

int RecordingStore::put_process(const RecordedProcess& p, std::int64_t& row_id) {
  const std::optional<std::string_view> name =
      p.name ? std::optional<std::string_view>(*p.name) : std::nullopt;
  const std::string job_text = p.job.empty() ? std::string() : training::job_json(p.job).dump();
  const std::optional<std::string_view> job =
      job_text.empty() ? std::nullopt : std::optional<std::string_view>(job_text);
  if (row_id != 0) {
    update_process_.bind(1, name).bind(2, p.max_used_memory_bytes);
    update_process_.bind(3, p.last_used_memory_bytes).bind(4, p.last_seen_ms).bind(5, job);
    update_process_.bind(6, row_id);
    return step_done(update_process_);
  }
  insert_process_.bind(1, static_cast<std::int64_t>(p.gpu)).bind(2, std::int64_t{p.pid});
  insert_process_.bind(3, name).bind(4, p.max_used_memory_bytes);
  insert_process_.bind(5, p.last_used_memory_bytes).bind(6, p.first_seen_ms);
  insert_process_.bind(7, p.last_seen_ms).bind(8, job);
  const int rc = step_done(insert_process_);
  if (rc == SQLITE_OK) row_id = db_.last_insert_rowid();
  return rc;
}

int RecordingStore::put_step(const training::Step& s) {
  Stmt& q = insert_step_;
  const std::optional<std::string_view> device =
      s.device ? std::optional<std::string_view>(*s.device) : std::nullopt;
  q.bind(1, s.received_ms).bind(2, s.pid).bind(3, s.rank).bind(4, s.local_rank);
  q.bind(5, s.world_size).bind(6, device).bind(7, s.step);
  q.bind_double(8, s.t_start_s).bind_double(9, s.t_end_s).bind_double(10, s.cpu_step_s);
  if (s.gpu_step_s)
    q.bind_double(11, *s.gpu_step_s);
  else
    q.bind_null(11);
  if (s.data_wait_s)
    q.bind_double(12, *s.data_wait_s);
  else
    q.bind_null(12);
  q.bind(13, s.allocated_bytes).bind(14, s.reserved_bytes);
  q.bind(15, s.active_bytes).bind(16, s.inactive_split_bytes).bind(17, s.allocated_peak_bytes);
  q.bind(18, s.reserved_peak_bytes).bind(19, s.num_alloc_retries).bind(20, s.num_ooms);
  return step_done(q);
}

int RecordingStore::put_rank_event(const training::RankEvent& e) {
  insert_rank_event_.bind(1, e.time_ms).bind(2, e.pid).bind(3, e.rank);
  insert_rank_event_.bind(4, std::string_view(e.kind)).bind(5, std::string_view(e.detail));
  return step_done(insert_rank_event_);
}

int RecordingStore::put_process_sample(const training::ProcessSample& s) {
  Stmt& q = insert_process_sample_;
  const auto real = [&q](int i, const std::optional<double>& v) {
    if (v)
      q.bind_double(i, *v);
    else
      q.bind_null(i);
  };
  q.bind(1, s.time_ms).bind(2, s.pid).bind(3, s.rank);
  real(4, s.cpu_s);
  q.bind(5, s.rss_bytes).bind(6, s.pss_bytes).bind(7, std::int64_t{s.pss_is_rss ? 1 : 0});
  q.bind(8, std::int64_t{s.workers});
  real(9, s.workers_cpu_s);
  q.bind(10, s.workers_pss_bytes).bind(11, s.mem_available_bytes).bind(12, s.mem_total_bytes);
  q.bind(13, s.cgroup_limit_bytes).bind(14, s.cgroup_usage_bytes);
  return step_done(q);
}

int RecordingStore::set_meta(std::string_view key, std::string_view value) {
  set_meta_.bind(1, key).bind(2, value);
  return step_done(set_meta_);
}

int RecordingStore::checkpoint() {
  return sqlite3_wal_checkpoint_v2(db_.get(), nullptr, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
}

int RecordingStore::finish(std::int64_t end_ms,
                           const std::vector<std::pair<std::string, std::string>>& meta) {
  int rc = begin();
  for (std::size_t i = 0; rc == SQLITE_OK && i < meta.size(); ++i)
    rc = set_meta(meta[i].first, meta[i].second);
  if (rc == SQLITE_OK) rc = set_meta("end_time", format_iso_ms(end_ms));
  if (rc == SQLITE_OK) rc = set_meta("end_time_ms", std::to_string(end_ms));
  if (rc == SQLITE_OK) rc = commit();
  if (rc != SQLITE_OK) {
    rollback();
    return rc;
  }
  return db_.exec("PRAGMA journal_mode = DELETE");
}

}  // namespace gpumon::record::detail
