// SPDX-License-Identifier: MIT
#include "record/schema.h"

#include "gpu/metric_catalog.h"

namespace gpumon::record::detail {
namespace {

constexpr const char* kTables = R"sql(
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE metrics(id INTEGER PRIMARY KEY, name TEXT NOT NULL, unit TEXT NOT NULL,
                     quantum REAL NOT NULL);
CREATE TABLE devices(gpu INTEGER PRIMARY KEY, name TEXT, uuid TEXT, pci_bus_id TEXT,
                     memory_total_bytes INTEGER, max_sm_clock_mhz INTEGER,
                     max_mem_clock_mhz INTEGER, max_graphics_clock_mhz INTEGER);
CREATE TABLE sample_chunks(id INTEGER PRIMARY KEY, gpu INTEGER NOT NULL,
                           first_time_ms INTEGER NOT NULL, last_time_ms INTEGER NOT NULL,
                           ticks INTEGER NOT NULL, data BLOB NOT NULL);
CREATE INDEX sample_chunks_by_gpu_time ON sample_chunks(gpu, first_time_ms);
CREATE TABLE events(id INTEGER PRIMARY KEY, gpu INTEGER NOT NULL, time_ms INTEGER NOT NULL,
                    kind TEXT NOT NULL, value INTEGER NOT NULL);
CREATE TABLE processes(id INTEGER PRIMARY KEY, gpu INTEGER NOT NULL, pid INTEGER NOT NULL,
                       name TEXT, max_used_memory_bytes INTEGER, last_used_memory_bytes INTEGER,
                       first_seen_ms INTEGER NOT NULL, last_seen_ms INTEGER NOT NULL,
                       job TEXT);
CREATE TABLE steps(id INTEGER PRIMARY KEY, received_ms INTEGER NOT NULL, pid INTEGER NOT NULL,
                   rank INTEGER, local_rank INTEGER, world_size INTEGER, device TEXT,
                   step INTEGER NOT NULL, t_start_s REAL NOT NULL, t_end_s REAL NOT NULL,
                   cpu_step_s REAL NOT NULL, gpu_step_s REAL, data_wait_s REAL,
                   allocated_bytes INTEGER, reserved_bytes INTEGER, active_bytes INTEGER,
                   inactive_split_bytes INTEGER, allocated_peak_bytes INTEGER,
                   reserved_peak_bytes INTEGER, num_alloc_retries INTEGER, num_ooms INTEGER);
CREATE INDEX steps_by_time ON steps(t_end_s);
CREATE TABLE rank_events(id INTEGER PRIMARY KEY, time_ms INTEGER NOT NULL, pid INTEGER NOT NULL,
                         rank INTEGER, kind TEXT NOT NULL, detail TEXT NOT NULL);
CREATE TABLE process_samples(id INTEGER PRIMARY KEY, time_ms INTEGER NOT NULL,
                             pid INTEGER NOT NULL, rank INTEGER, cpu_s REAL, rss_bytes INTEGER,
                             pss_bytes INTEGER, pss_is_rss INTEGER NOT NULL,
                             workers INTEGER NOT NULL, workers_cpu_s REAL,
                             workers_pss_bytes INTEGER, mem_available_bytes INTEGER,
                             mem_total_bytes INTEGER, cgroup_limit_bytes INTEGER,
                             cgroup_usage_bytes INTEGER);
)sql";

}  // namespace

int create_schema(Db& db) {
  if (int rc = db.exec("BEGIN"); rc != SQLITE_OK) return rc;
  int rc = db.exec(kTables);
  auto meta = db.prepare("INSERT INTO meta(key, value) VALUES (?, ?)");
  if (rc == SQLITE_OK) {
    meta.bind(1, std::string_view("format")).bind(2, std::string_view(kFormatName));
    rc = meta.step() == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
  }
  auto metric = db.prepare("INSERT INTO metrics(id, name, unit, quantum) VALUES (?, ?, ?, ?)");
  for (const auto& m : metric_catalog()) {
    if (rc != SQLITE_OK) break;
    metric.bind(1, static_cast<std::int64_t>(m.id)).bind(2, m.name).bind(3, m.unit);
    metric.bind_double(4, m.quantum);
    rc = metric.step() == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
    metric.reset();
  }
  if (rc == SQLITE_OK) rc = db.exec("PRAGMA user_version = " + std::to_string(kSchemaVersion));
  if (rc == SQLITE_OK) return db.exec("COMMIT");
  db.exec("ROLLBACK");
  return rc;
}

std::string describe_error(Db& db, int rc) {
  switch (rc & 0xFF) {
    case SQLITE_NOTADB: return "not a gpumon recording: the file is not an SQLite database";
    case SQLITE_CORRUPT: return "the recording is damaged (truncated or corrupt): " + db.message();
    case SQLITE_BUSY:
    case SQLITE_LOCKED: return "the recording is locked by another process: " + db.message();
    default: return "cannot read the recording: " + db.message();
  }
}

std::string check_schema(Db& db) {
  auto version = db.prepare("PRAGMA user_version");
  int rc = version.ok() ? version.step() : sqlite3_errcode(db.get());
  if (rc != SQLITE_ROW) return describe_error(db, rc);
  const std::int64_t v = version.int64(0);
  auto tables = db.prepare("SELECT count(*) FROM sqlite_master WHERE name = 'meta'");
  rc = tables.ok() ? tables.step() : sqlite3_errcode(db.get());
  if (rc != SQLITE_ROW) return describe_error(db, rc);
  if (tables.int64(0) == 0)
    return "not a gpumon recording: an SQLite database without gpumon's meta table";
  auto format = db.prepare("SELECT value FROM meta WHERE key = 'format'");
  rc = format.ok() ? format.step() : sqlite3_errcode(db.get());
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) return describe_error(db, rc);
  if (rc == SQLITE_DONE || format.text(0) != kFormatName)
    return "not a gpumon recording: its meta table does not say format = gpumon-recording";
  if (v > kSchemaVersion)
    return "recording schema version " + std::to_string(v) + " is newer than this gpumon reads (" +
           std::to_string(kSchemaVersion) + "): upgrade gpumon";
  if (v < 1) return "not a gpumon recording (schema version " + std::to_string(v) + ")";
  return {};
}

}  // namespace gpumon::record::detail
