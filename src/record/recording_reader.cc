// SPDX-License-Identifier: MIT
#include "record/recording_reader.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "record/schema.h"
#include "record/wal_scan.h"
#include "training/job_json.h"
#include "training/protocol.h"

namespace gpumon::record {
namespace {

using detail::Stmt;

std::optional<std::string> opt_text(const Stmt& s, int col) {
  if (s.is_null(col)) return std::nullopt;
  return s.text(col);
}

std::optional<std::int64_t> opt_int(const Stmt& s, int col) {
  if (s.is_null(col)) return std::nullopt;
  return s.int64(col);
}

std::string check_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return path + ": " + std::strerror(errno);
  if (S_ISDIR(st.st_mode)) return path + ": is a directory, not a gpumon recording";
  if (!S_ISREG(st.st_mode)) return path + ": not a regular file, not a gpumon recording";
  if (st.st_size == 0) return path + ": empty file, not a gpumon recording";
  return {};
}

// A finished recording is one file of page_count pages; a shorter one was cut off (SQLite
// would only notice when it reads a missing page).
std::string check_length(detail::Db& db, const std::string& path) {
  struct stat wal {};
  if (::stat((path + "-wal").c_str(), &wal) == 0 && wal.st_size > 0) return {};
  struct stat st {};
  auto count = db.prepare("PRAGMA page_count");
  auto size = db.prepare("PRAGMA page_size");
  if (::stat(path.c_str(), &st) != 0 || count.step() != SQLITE_ROW || size.step() != SQLITE_ROW)
    return {};
  const std::int64_t expected = count.int64(0) * size.int64(0);
  if (st.st_size >= expected) return {};
  return "the recording is damaged (truncated: " + std::to_string(st.st_size) + " of " +
         std::to_string(expected) + " bytes)";
}

// Read before SQLite opens the file (opening creates an empty -wal beside it). A file in WAL
// mode (header bytes 18 and 19 are 2) was not closed: the writer switches a finished recording
// back to a rollback journal. Its -wal file holds the commits since the last checkpoint; SQLite
// stops reading a WAL at its first bad frame and ignores one with a bad header.
std::string wal_warning(const std::string& path) {
  unsigned char header[20] = {};
  if (FILE* f = std::fopen(path.c_str(), "rb")) {
    const std::size_t n = std::fread(header, 1, sizeof header, f);
    std::fclose(f);
    if (n != sizeof header || header[18] != 2 || header[19] != 2) return {};
  } else {
    return {};
  }
  const std::string lost =
      ": it holds what was checkpointed into the main file (all but the last seconds)";
  struct stat wal {};
  if (::stat((path + "-wal").c_str(), &wal) != 0 || wal.st_size == 0)
    return "the recording was not closed and its -wal file is missing" + lost;
  // A bad header (magic number, page size, checksum), or a damaged frame further in: SQLite
  // replays the frames before it and drops the rest.
  const detail::WalScan scan = detail::scan_wal(path + "-wal");
  if (!scan.header_ok) return "the recording was not closed and its -wal file is damaged" + lost;
  if (scan.damaged)
    return "the recording was not closed and its -wal file is damaged at frame " +
           std::to_string(scan.valid + 1) + " of " + std::to_string(scan.valid + scan.lost_frames) +
           ": it holds what was checkpointed into the main file and the commits before that frame; "
           "the " +
           std::to_string(scan.lost_frames) + " frames from it on are lost";
  return {};
}

}  // namespace

std::unique_ptr<RecordingReader> RecordingReader::open(const std::string& path,
                                                       std::string& error) {
  if (error = check_file(path); !error.empty()) return nullptr;
  std::unique_ptr<RecordingReader> r(new RecordingReader());
  r->path_ = path;
  r->warning_ = wal_warning(path);
  if (r->db_.open(path, SQLITE_OPEN_READONLY, error) != SQLITE_OK) {
    error = path + ": cannot open: " + error;
    return nullptr;
  }
  if (error = r->load(); !error.empty()) {
    error = path + ": " + error;
    return nullptr;
  }
  return r;
}

std::string RecordingReader::load() {
  if (auto e = detail::check_schema(db_); !e.empty()) return e;
  if (auto e = check_length(db_, path_); !e.empty()) return e;
  auto meta = db_.prepare("SELECT key, value FROM meta");
  int rc = meta.ok() ? SQLITE_ROW : sqlite3_errcode(db_.get());
  while (rc == SQLITE_ROW && (rc = meta.step()) == SQLITE_ROW) meta_[meta.text(0)] = meta.text(1);
  if (rc != SQLITE_DONE) return detail::describe_error(db_, rc);

  auto dev = db_.prepare(
      "SELECT gpu, name, uuid, pci_bus_id, memory_total_bytes, max_sm_clock_mhz, "
      "max_mem_clock_mhz, max_graphics_clock_mhz FROM devices ORDER BY gpu");
  rc = dev.ok() ? SQLITE_ROW : sqlite3_errcode(db_.get());
  while (rc == SQLITE_ROW && (rc = dev.step()) == SQLITE_ROW) {
    RecordedDevice d;
    d.index = static_cast<unsigned>(dev.int64(0));
    d.name = opt_text(dev, 1);
    d.uuid = opt_text(dev, 2);
    d.pci_bus_id = opt_text(dev, 3);
    d.memory_total_bytes = opt_int(dev, 4);
    d.max_sm_clock_mhz = opt_int(dev, 5);
    d.max_mem_clock_mhz = opt_int(dev, 6);
    d.max_graphics_clock_mhz = opt_int(dev, 7);
    devices_.push_back(std::move(d));
  }
  if (rc != SQLITE_DONE) return detail::describe_error(db_, rc);

  auto met = db_.prepare("SELECT id, name, unit, quantum FROM metrics ORDER BY id");
  rc = met.ok() ? SQLITE_ROW : sqlite3_errcode(db_.get());
  while (rc == SQLITE_ROW && (rc = met.step()) == SQLITE_ROW) {
    const std::int64_t id = met.int64(0);
    if (id < 0 || id > 0xFFFF || !(met.real(3) > 0)) return "bad row in the metrics table";
    if (metrics_.size() <= static_cast<std::size_t>(id)) metrics_.resize(id + 1);
    metrics_[id] = RecordedMetric{met.text(1), met.text(2), met.real(3)};
  }
  if (rc != SQLITE_DONE) return detail::describe_error(db_, rc);
  return {};
}

std::optional<std::string> RecordingReader::meta(const std::string& key) const {
  auto it = meta_.find(key);
  if (it == meta_.end()) return std::nullopt;
  return it->second;
}

ReadResult<std::vector<RecordedEvent>> RecordingReader::events() const {
  std::vector<RecordedEvent> out;
  auto s = db_.prepare("SELECT gpu, time_ms, kind, value FROM events ORDER BY time_ms, id");
  int rc = s.ok() ? SQLITE_ROW : sqlite3_errcode(db_.get());
  while (rc == SQLITE_ROW && (rc = s.step()) == SQLITE_ROW)
    out.push_back({static_cast<unsigned>(s.int64(0)), s.int64(1), s.text(2), s.int64(3)});
  if (rc != SQLITE_DONE) return detail::describe_error(db_, rc);
  return out;
}

ReadResult<std::vector<RecordedProcess>> RecordingReader::processes() const {
  std::vector<RecordedProcess> out;
  // The job column is there from schema version 5 on.
  auto s = db_.prepare(
      std::string("SELECT gpu, pid, name, max_used_memory_bytes, last_used_memory_bytes, "
                  "first_seen_ms, last_seen_ms, ") +
      (has_column("processes", "job") ? "job" : "NULL") +
      " FROM processes ORDER BY first_seen_ms, id");
  int rc = s.ok() ? SQLITE_ROW : sqlite3_errcode(db_.get());
  while (rc == SQLITE_ROW && (rc = s.step()) == SQLITE_ROW) {
    RecordedProcess p;
    p.gpu = static_cast<unsigned>(s.int64(0));
    p.pid = static_cast<unsigned>(s.int64(1));
    p.name = opt_text(s, 2);
    p.max_used_memory_bytes = opt_int(s, 3), p.last_used_memory_bytes = opt_int(s, 4);
    p.first_seen_ms = s.int64(5), p.last_seen_ms = s.int64(6);
    if (const auto job = opt_text(s, 7))
      p.job = training::job_from_json(nlohmann::json::parse(*job, nullptr, false));
    out.push_back(std::move(p));
  }
  if (rc != SQLITE_DONE) return detail::describe_error(db_, rc);
  return out;
}

bool RecordingReader::has_column(const char* table, const char* column) const {
  auto s = db_.prepare("SELECT count(*) FROM pragma_table_info(?) WHERE name = ?");
  s.bind(1, std::string_view(table)).bind(2, std::string_view(column));
  return s.ok() && s.step() == SQLITE_ROW && s.int64(0) > 0;
}

bool RecordingReader::has_table(const char* name) const {
  auto s = db_.prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?");
  s.bind(1, std::string_view(name));
  return s.ok() && s.step() == SQLITE_ROW && s.int64(0) > 0;
}

ReadResult<std::size_t> RecordingReader::for_each_step(
    const std::function<void(training::Step&&)>& f) const {
  std::size_t n = 0;
  if (!has_table("steps")) return n;  // schema version 1
  auto s = db_.prepare(
      "SELECT received_ms, pid, rank, local_rank, world_size, device, step, t_start_s, t_end_s, "
      "cpu_step_s, gpu_step_s, data_wait_s, allocated_bytes, reserved_bytes, active_bytes, "
      "inactive_split_bytes, allocated_peak_bytes, reserved_peak_bytes, num_alloc_retries, "
      "num_ooms FROM steps ORDER BY t_end_s, id");
  int rc = s.ok() ? SQLITE_ROW : sqlite3_errcode(db_.get());
  while (rc == SQLITE_ROW && (rc = s.step()) == SQLITE_ROW) {
    training::Step r;
    r.received_ms = s.int64(0);
    r.pid = s.int64(1);
    r.rank = opt_int(s, 2);
    r.local_rank = opt_int(s, 3);
    r.world_size = opt_int(s, 4);
    r.device = opt_text(s, 5);
    r.step = s.int64(6);
    r.t_start_s = s.real(7);
    r.t_end_s = s.real(8);
    r.cpu_step_s = s.real(9);
    if (!s.is_null(10)) r.gpu_step_s = s.real(10);
    if (!s.is_null(11)) r.data_wait_s = s.real(11);  // NULL from version 4 on
    r.allocated_bytes = opt_int(s, 12);
    r.reserved_bytes = opt_int(s, 13);
    r.active_bytes = opt_int(s, 14);
    r.inactive_split_bytes = opt_int(s, 15);
    r.allocated_peak_bytes = opt_int(s, 16);
    r.reserved_peak_bytes = opt_int(s, 17);
    r.num_alloc_retries = opt_int(s, 18);
    r.num_ooms = opt_int(s, 19);
    f(std::move(r));
    ++n;
  }
  if (rc != SQLITE_DONE) return detail::describe_error(db_, rc);
  return n;
}

ReadResult<std::vector<training::Step>> RecordingReader::steps() const {
  std::vector<training::Step> out;
  auto n = for_each_step([&](training::Step&& r) { out.push_back(std::move(r)); });
  if (auto* e = std::get_if<std::string>(&n)) return *e;
  return out;
}

ReadResult<std::vector<training::RankEvent>> RecordingReader::rank_events() const {
  std::vector<training::RankEvent> out;
  if (!has_table("rank_events")) return out;  // schema version 1
  auto s = db_.prepare("SELECT time_ms, pid, rank, kind, detail FROM rank_events ORDER BY id");
  int rc = s.ok() ? SQLITE_ROW : sqlite3_errcode(db_.get());
  while (rc == SQLITE_ROW && (rc = s.step()) == SQLITE_ROW)
    out.push_back(
        training::rank_event(s.int64(0), s.int64(1), opt_int(s, 2), s.text(3), s.text(4)));
  if (rc != SQLITE_DONE) return detail::describe_error(db_, rc);
  return out;
}

ReadResult<std::vector<training::ProcessSample>> RecordingReader::process_samples() const {
  std::vector<training::ProcessSample> out;
  auto n = for_each_process_sample([&](training::ProcessSample&& p) { out.push_back(p); });
  if (auto* e = std::get_if<std::string>(&n)) return *e;
  return out;
}

ReadResult<std::size_t> RecordingReader::for_each_process_sample(
    const std::function<void(training::ProcessSample&&)>& f) const {
  std::size_t n = 0;
  if (!has_table("process_samples")) return n;  // schema version 1 or 2
  auto s = db_.prepare(
      "SELECT time_ms, pid, rank, cpu_s, rss_bytes, pss_bytes, pss_is_rss, workers, "
      "workers_cpu_s, workers_pss_bytes, mem_available_bytes, mem_total_bytes, "
      "cgroup_limit_bytes, cgroup_usage_bytes FROM process_samples ORDER BY time_ms, id");
  const auto real = [&s](int i) {
    return s.is_null(i) ? std::nullopt : std::optional<double>(s.real(i));
  };
  int rc = s.ok() ? SQLITE_ROW : sqlite3_errcode(db_.get());
  while (rc == SQLITE_ROW && (rc = s.step()) == SQLITE_ROW) {
    training::ProcessSample p;
    p.time_ms = s.int64(0), p.pid = s.int64(1), p.rank = opt_int(s, 2);
    p.cpu_s = real(3);
    p.rss_bytes = opt_int(s, 4), p.pss_bytes = opt_int(s, 5), p.pss_is_rss = s.int64(6) != 0;
    p.workers = static_cast<std::int32_t>(s.int64(7));
    p.workers_cpu_s = real(8);
    p.workers_pss_bytes = opt_int(s, 9);
    p.mem_available_bytes = opt_int(s, 10), p.mem_total_bytes = opt_int(s, 11);
    p.cgroup_limit_bytes = opt_int(s, 12), p.cgroup_usage_bytes = opt_int(s, 13);
    f(std::move(p));
    ++n;
  }
  if (rc != SQLITE_DONE) return detail::describe_error(db_, rc);
  return n;
}

ReadResult<std::vector<ChunkRef>> RecordingReader::chunks(std::optional<unsigned> gpu) const {
  std::vector<ChunkRef> out;
  auto s = db_.prepare(
      "SELECT id, gpu, first_time_ms, last_time_ms, ticks FROM sample_chunks "
      "WHERE ?1 IS NULL OR gpu = ?1 ORDER BY gpu, first_time_ms, id");
  if (gpu) s.bind(1, static_cast<std::int64_t>(*gpu));
  int rc = s.ok() ? SQLITE_ROW : sqlite3_errcode(db_.get());
  while (rc == SQLITE_ROW && (rc = s.step()) == SQLITE_ROW)
    out.push_back(
        {s.int64(0), static_cast<unsigned>(s.int64(1)), s.int64(2), s.int64(3), s.int64(4)});
  if (rc != SQLITE_DONE) return detail::describe_error(db_, rc);
  return out;
}

ReadResult<ChunkData> RecordingReader::read_chunk(const ChunkRef& ref) const {
  auto s = db_.prepare("SELECT data FROM sample_chunks WHERE id = ?");
  s.bind(1, ref.id);
  const int rc = s.ok() ? s.step() : sqlite3_errcode(db_.get());
  if (rc == SQLITE_DONE) return "chunk " + std::to_string(ref.id) + " is missing";
  if (rc != SQLITE_ROW) return detail::describe_error(db_, rc);
  auto decoded = decode_chunk(s.blob(0));
  if (auto* e = std::get_if<std::string>(&decoded))
    return "the recording is damaged: samples of GPU " + std::to_string(ref.gpu) + " from " +
           format_iso_ms(ref.first_time_ms) + ": " + *e;
  return std::get<ChunkData>(std::move(decoded));
}

}  // namespace gpumon::record
