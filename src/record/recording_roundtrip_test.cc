// SPDX-License-Identifier: MIT
// Writes recordings through RecordingWriter and reads them back: every metric exactly, missing
// values, a lost GPU, counters, events, processes, metadata.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <thread>

#include "record/recording_reader.h"
#include "record/recording_writer.h"
#include "record/sample_stream.h"
#include "record/test_support.h"

namespace gpumon::record {
namespace {

using testing::TempDir;

constexpr std::int64_t kStartMs = 1764446400000;  // 2025-11-29T20:00:00Z

std::unique_ptr<RecordingWriter> open_writer(const std::string& path, unsigned gpus,
                                             RecordingOptions options = {}) {
  options.path = path;
  std::string error;
  auto w = RecordingWriter::create(options, testing::test_run_info(), testing::make_devices(gpus),
                                   error);
  EXPECT_NE(w, nullptr) << error;
  return w;
}

TEST(Recording, GivesBackEverySampleExactly) {
  TempDir dir;
  const std::string path = dir.file("run.gpumon");
  std::vector<TickSample> ticks;
  for (int i = 0; i < 250; ++i) ticks.push_back(testing::make_tick(3, i, kStartMs, 100));
  ticks[7].gpus[1].power_draw_w = std::nan("");  // NaN is never stored: it reads back missing
  ticks[8].gpus[2].energy_mj = Reading<std::uint64_t>::missing(Missing::kError);
  ticks[9].gpus.erase(ticks[9].gpus.begin() + 1);  // GPU 1 not due this tick
  {
    // Small chunks so the run spans several, including ones closed by time.
    RecordingOptions options;
    options.chunk_max_ticks = 64;
    options.chunk_max_span = std::chrono::seconds(5);
    auto w = open_writer(path, 3, options);
    ASSERT_NE(w, nullptr);
    for (const auto& t : ticks) w->on_tick(t);
    w->close();
    EXPECT_EQ(w->status().ticks_written, ticks.size());
    EXPECT_EQ(w->status().error, "");
  }
  const auto rows = testing::read_all_rows(path);
  std::size_t k = 0;
  for (const auto& t : ticks) {
    for (const auto& s : t.gpus) {
      ASSERT_LT(k, rows.size());
      const auto& row = rows[k++];
      EXPECT_EQ(row.gpu, s.index);
      EXPECT_EQ(row.time_ms, to_unix_ms(t.wall_time));
      for (const auto& m : metric_catalog())
        EXPECT_EQ(row.values[static_cast<std::size_t>(m.id)], testing::expected_value(s, m.id))
            << m.name << " gpu " << s.index << " at " << row.time_ms;
    }
  }
  EXPECT_EQ(k, rows.size());
  EXPECT_FALSE(rows[7 * 3 + 1].values[static_cast<std::size_t>(MetricId::kPowerDrawW)]);
  EXPECT_EQ(rows[0].values[static_cast<std::size_t>(MetricId::kPowerDrawW)], 450.0);
  EXPECT_EQ(rows[0].values[static_cast<std::size_t>(MetricId::kEnergyJ)], 9876543.21);
}

TEST(Recording, KeepsALostGpuAsLostWithItsReadingsMissing) {
  TempDir dir;
  const std::string path = dir.file("lost.gpumon");
  auto w = open_writer(path, 2);
  for (int i = 0; i < 10; ++i) {
    TickSample t = testing::make_tick(2, i, kStartMs, 1000);
    if (i >= 5) {
      DeviceSample lost;
      lost.index = 1;
      lost.wall_time = t.wall_time;
      lost.lost = true;
      lost.power_draw_w = Reading<double>::missing(Missing::kGpuLost);
      t.gpus[1] = lost;
    }
    w->on_tick(t);
  }
  w->on_event(GpuEvent{1,
                       GpuEvent::Kind::kXid,
                       79,
                       WallClock::time_point(std::chrono::milliseconds(kStartMs + 4900)),
                       {}});
  w->on_event(GpuEvent{1,
                       GpuEvent::Kind::kLost,
                       0,
                       WallClock::time_point(std::chrono::milliseconds(kStartMs + 5000)),
                       {}});
  w->close();
  const auto rows = testing::read_all_rows(path);
  ASSERT_EQ(rows.size(), 20U);
  const auto lost = static_cast<std::size_t>(MetricId::kLost);
  const auto power = static_cast<std::size_t>(MetricId::kPowerDrawW);
  EXPECT_EQ(rows[9].values[lost], 0.0);
  EXPECT_EQ(rows[11].values[lost], 1.0);
  EXPECT_FALSE(rows[11].values[power]);
  EXPECT_TRUE(rows[10].values[power]);

  std::string error;
  auto reader = RecordingReader::open(path, error);
  ASSERT_NE(reader, nullptr) << error;
  const auto events = std::get<std::vector<RecordedEvent>>(reader->events());
  ASSERT_EQ(events.size(), 2U);
  EXPECT_EQ(events[0].kind, "xid");
  EXPECT_EQ(events[0].value, 79);
  EXPECT_EQ(events[0].time_ms, kStartMs + 4900);
  EXPECT_EQ(events[1].kind, "lost");
}

TEST(Recording, StoresRunMetadataDevicesAndProcessLifetimes) {
  TempDir dir;
  const std::string path = dir.file("meta.gpumon");
  auto w = open_writer(path, 2);
  auto snapshot = [](int t_s, std::vector<std::pair<unsigned, std::uint64_t>> procs) {
    ProcessSnapshot s;
    s.gpu = 0;
    s.wall_time = WallClock::time_point(std::chrono::milliseconds(kStartMs + t_s * 1000));
    for (auto [pid, mem] : procs) {
      GpuProcess p;
      p.pid = pid;
      p.used_memory_bytes = mem;
      p.name = std::string("python3");
      if (pid == 200) p.job.id = "4711.0", p.job.id_source = "slurm", p.job.slurm_job_id = "4711";
      s.processes.push_back(p);
    }
    return s;
  };
  w->on_processes(snapshot(0, {{100, 1000}, {200, 5}}));
  w->on_processes(snapshot(1, {{100, 3000}}));
  w->on_processes(snapshot(2, {{100, 2000}, {200, 7}}));  // 200 came back: a new stretch
  w->on_tick(testing::make_tick(2, 0, kStartMs, 1000));
  w->close();

  std::string error;
  auto reader = RecordingReader::open(path, error);
  ASSERT_NE(reader, nullptr) << error;
  EXPECT_EQ(reader->meta("format"), "gpumon-recording");
  EXPECT_EQ(reader->meta("schema_version"), "5");
  EXPECT_EQ(reader->meta("hostname"), "testhost");
  EXPECT_EQ(reader->meta("command"), "python3 train.py");
  EXPECT_EQ(reader->meta("driver_version"), "580.159.04");
  EXPECT_EQ(reader->meta("simulated_scenario"), "unit-test");
  EXPECT_TRUE(reader->meta("start_time"));
  EXPECT_TRUE(reader->meta("end_time"));
  ASSERT_EQ(reader->devices().size(), 2U);
  EXPECT_EQ(reader->devices()[1].uuid, "GPU-00000001-aaaa-bbbb-cccc-dddddddddddd");
  EXPECT_EQ(reader->devices()[1].memory_total_bytes, 150754820096);
  EXPECT_EQ(reader->devices()[1].max_graphics_clock_mhz, std::nullopt);

  const auto procs = std::get<std::vector<RecordedProcess>>(reader->processes());
  ASSERT_EQ(procs.size(), 3U);
  EXPECT_EQ(procs[0].pid, 100U);
  EXPECT_EQ(procs[0].first_seen_ms, kStartMs);
  EXPECT_EQ(procs[0].last_seen_ms, kStartMs + 2000);
  EXPECT_EQ(procs[0].max_used_memory_bytes, 3000);
  EXPECT_EQ(procs[0].last_used_memory_bytes, 2000);
  EXPECT_EQ(procs[1].pid, 200U);
  EXPECT_EQ(procs[1].last_seen_ms, kStartMs);
  EXPECT_EQ(procs[2].pid, 200U);
  EXPECT_EQ(procs[2].first_seen_ms, kStartMs + 2000);
  EXPECT_EQ(procs[2].name, "python3");
  // Each process's job as the node read it (schema 5); none known for pid 100.
  EXPECT_TRUE(procs[0].job.empty());
  EXPECT_EQ(procs[1].job.id, "4711.0");
  EXPECT_EQ(procs[2].job.slurm_job_id, "4711");
  // A recording of schema 4 has no job column: its processes read without one.
  reader.reset();
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, "ALTER TABLE processes DROP COLUMN job", nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(db);
  }
  reader = RecordingReader::open(path, error);
  ASSERT_NE(reader, nullptr) << error;
  const auto old = std::get<std::vector<RecordedProcess>>(reader->processes());
  ASSERT_EQ(old.size(), 3U);
  EXPECT_TRUE(old[1].job.empty());
}

TEST(Recording, RefusesToOverwriteUnlessAskedAndReportsUnwritablePaths) {
  TempDir dir;
  const std::string path = dir.file("twice.gpumon");
  open_writer(path, 1)->close();
  std::string error;
  RecordingOptions options;
  options.path = path;
  EXPECT_EQ(RecordingWriter::create(options, {}, {}, error), nullptr);
  EXPECT_NE(error.find("already exists"), std::string::npos) << error;
  options.overwrite = true;
  EXPECT_NE(RecordingWriter::create(options, {}, {}, error), nullptr) << error;
  options.path = dir.file("no/such/folder/run.gpumon");
  EXPECT_EQ(RecordingWriter::create(options, {}, {}, error), nullptr);
  EXPECT_NE(error.find(options.path + ": cannot create the recording: the folder " +
                       dir.file("no/such/folder") + " does not exist"),
            std::string::npos)
      << error;
  if (::geteuid() == 0) GTEST_SKIP() << "root writes through any permission";
  const std::string locked = dir.file("locked");
  ASSERT_EQ(::mkdir(locked.c_str(), 0500), 0);
  options.path = locked + "/run.gpumon";
  EXPECT_EQ(RecordingWriter::create(options, {}, {}, error), nullptr);
  EXPECT_NE(error.find("no permission for writing in the folder " + locked), std::string::npos)
      << error;
  ASSERT_EQ(::chmod(path.c_str(), 0), 0);
  EXPECT_EQ(RecordingReader::open(path, error), nullptr);
  EXPECT_NE(error.find("no permission for reading " + path), std::string::npos) << error;
}

// A recording holds command lines, user and process names: its owner alone may read it, its
// -wal and -shm files (written while it records) included, whatever the umask allows.
TEST(Recording, IsReadableByItsOwnerOnly) {
  TempDir dir;
  const std::string path = dir.file("private.gpumon");
  const mode_t umask_before = ::umask(022);
  auto w = open_writer(path, 1);
  ::umask(umask_before);
  ASSERT_NE(w, nullptr);
  for (const char* suffix : {"", "-wal", "-shm"}) {
    struct stat st {};
    ASSERT_EQ(::stat((path + suffix).c_str(), &st), 0) << suffix;
    EXPECT_EQ(st.st_mode & 0777, 0600U) << path << suffix;
  }
  w->close();
}

// Someone polling the path read-only (a script waiting for the run, `doctor` on the live file)
// may hold a shared lock on the still empty file just as the writer switches it to WAL: creation
// waits for the reader instead of failing with SQLite's BUSY. The reader holds each lock 1 ms so
// that it overlaps the switch in most of the rounds; creation must succeed in every one.
TEST(Recording, IsCreatedWhileAReaderPollsThePath) {
  TempDir dir;
  constexpr int kRounds = 20;
  std::atomic<int> round{0};
  std::atomic<int> overlapped{0};
  std::thread reader([&] {
    for (int r = round.load(); r < kRounds; r = round.load()) {
      const std::string path = dir.file("polled-" + std::to_string(r) + ".gpumon");
      sqlite3* db = nullptr;
      if (::access(path.c_str(), F_OK) == 0 &&
          sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK &&
          sqlite3_exec(db, "BEGIN; SELECT count(*) FROM sqlite_master", nullptr, nullptr,
                       nullptr) == SQLITE_OK) {
        overlapped.fetch_add(1);
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr);
      }
      sqlite3_close(db);
    }
  });
  for (int r = 0; r < kRounds; ++r) {
    const std::string path = dir.file("polled-" + std::to_string(r) + ".gpumon");
    auto w = open_writer(path, 1);
    if (w) w->close();
    round.store(r + 1);
  }
  reader.join();
  RecordProperty("reader_locks", overlapped.load());
}

TEST(Recording, DropsAndCountsWhatDoesNotFitTheQueue) {
  TempDir dir;
  RecordingOptions options;
  options.queue_capacity = 5;
  options.flush_interval = std::chrono::hours(1);  // nothing is written before close()
  auto w = open_writer(dir.file("q.gpumon"), 1, options);
  for (int i = 0; i < 12; ++i) w->on_tick(testing::make_tick(1, i, kStartMs, 1000));
  w->close();
  EXPECT_EQ(w->status().ticks_written, 5U);
  EXPECT_EQ(w->status().dropped, 7U);
  w->on_tick(testing::make_tick(1, 99, kStartMs, 1000));  // after close: counted, not written
  EXPECT_EQ(w->status().dropped, 8U);
  EXPECT_EQ(testing::read_all_rows(dir.file("q.gpumon")).size(), 5U);
}

}  // namespace
}  // namespace gpumon::record
