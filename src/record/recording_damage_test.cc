// SPDX-License-Identifier: MIT
// Files that are not good recordings: each gives a clear message, never a crash.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <sstream>
#include <thread>

#include "record/export_command.h"
#include "record/recording_reader.h"
#include "record/recording_writer.h"
#include "record/sample_stream.h"
#include "record/test_support.h"
#include "record/wal_scan.h"

namespace gpumon::record {
namespace {

using testing::TempDir;

std::string open_error(const std::string& path) {
  std::string error;
  auto reader = RecordingReader::open(path, error);
  return reader ? std::string() : error;
}

void sql(const std::string& path, const char* statement) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(db, statement, nullptr, nullptr, nullptr), SQLITE_OK) << statement;
  sqlite3_close(db);
}

// A finished recording of 2 GPUs over 20 minutes at 1 Hz (several pages of chunks).
std::string good_recording(const TempDir& dir) {
  const std::string path = dir.file("good.gpumon");
  RecordingOptions options;
  options.path = path;
  std::string error;
  auto w =
      RecordingWriter::create(options, testing::test_run_info(), testing::make_devices(2), error);
  EXPECT_NE(w, nullptr) << error;
  for (int i = 0; i < 1200; ++i) w->on_tick(testing::make_tick(2, i, 1764446400000, 1000));
  w->close();
  return path;
}

// Opens and exports `path`: either works, or fails with a message; returns the message.
std::string read_everything(const std::string& path) {
  std::ostringstream out;
  std::ostringstream err;
  const int rc =
      run_export_command({path, "--format", "jsonl", "--metrics", "power_draw_w"}, out, err);
  if (rc != kExportOk) {
    EXPECT_NE(err.str(), "") << "exit " << rc << " without a message";
  }
  return err.str();
}

TEST(RecordingDamage, NamesWhatIsWrongWithFilesThatAreNotRecordings) {
  TempDir dir;
  EXPECT_NE(open_error(dir.file("missing.gpumon")).find("No such file"), std::string::npos);
  EXPECT_NE(open_error(dir.path()).find("is a directory"), std::string::npos);
  testing::write_file(dir.file("empty.gpumon"), "");
  EXPECT_NE(open_error(dir.file("empty.gpumon")).find("empty file"), std::string::npos);
  testing::write_file(dir.file("text.gpumon"), std::string(5000, 'x'));
  EXPECT_NE(open_error(dir.file("text.gpumon")).find("not an SQLite database"), std::string::npos)
      << open_error(dir.file("text.gpumon"));

  const std::string other = dir.file("other.db");
  sql(other, "CREATE TABLE t(x); INSERT INTO t VALUES (1)");
  EXPECT_NE(open_error(other).find("not a gpumon recording"), std::string::npos)
      << open_error(other);
  sql(other, "CREATE TABLE meta(key TEXT, value TEXT); INSERT INTO meta VALUES ('format', 'x')");
  EXPECT_NE(open_error(other).find("not a gpumon recording"), std::string::npos);
}

TEST(RecordingDamage, RefusesANewerSchemaVersion) {
  TempDir dir;
  const std::string path = good_recording(dir);
  sql(path, "PRAGMA user_version = 6");
  EXPECT_NE(open_error(path).find("schema version 6 is newer than this gpumon reads (5)"),
            std::string::npos)
      << open_error(path);
}

TEST(RecordingDamage, TruncatedFilesGiveAMessageAtEveryCut) {
  TempDir dir;
  const std::string path = good_recording(dir);
  const std::size_t size = testing::read_file(path).size();
  ASSERT_GT(size, 8192U);
  int refused = 0;
  for (std::size_t cut : {std::size_t{0}, std::size_t{50}, std::size_t{100}, std::size_t{4096},
                          size / 3, size / 2, size - 4096, size - 1}) {
    const std::string copy = dir.file("cut-" + std::to_string(cut) + ".gpumon");
    testing::copy_prefix(path, copy, cut);
    const std::string message = read_everything(copy);
    EXPECT_NE(message, "") << "cut at " << cut;
    refused += message.empty() ? 0 : 1;
  }
  EXPECT_EQ(refused, 8);
}

TEST(RecordingDamage, FlippedBytesNeverCrashTheReader) {
  TempDir dir;
  const std::string path = good_recording(dir);
  const std::string bytes = testing::read_file(path);
  int messages = 0;
  for (std::size_t step = 0; step < 16; ++step) {
    std::string damaged = bytes;
    const std::size_t at = (step * 7919 + 13) % damaged.size();
    for (std::size_t k = at; k < std::min(at + 16, damaged.size()); ++k)
      damaged[k] = static_cast<char>(damaged[k] ^ 0x5A);
    const std::string copy = dir.file("flip.gpumon");
    testing::write_file(copy, damaged);
    messages += read_everything(copy).empty() ? 0 : 1;  // some flips hit unused bytes
  }
  EXPECT_GT(messages, 0);
}

TEST(RecordingDamage, ADamagedChunkStopsTheExportWithItsGpuAndTime) {
  TempDir dir;
  const std::string path = good_recording(dir);
  sql(path, "UPDATE sample_chunks SET data = x'0101ff' WHERE gpu = 1");
  const std::string message = read_everything(path);
  EXPECT_NE(message.find("the recording is damaged: samples of GPU 1 from"), std::string::npos)
      << message;
}

// A killed recording whose -wal file has one damaged frame in the middle: SQLite replays the
// frames before it and drops the rest without a word; the reader says so.
TEST(RecordingDamage, ADamagedFrameInTheWalIsSaid) {
  TempDir dir;
  const std::string path = dir.file("killed.gpumon");
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // commits often, never checkpoints, and dies without closing
    RecordingOptions options;
    options.path = path;
    options.flush_interval = std::chrono::milliseconds(1);
    options.checkpoint_interval = std::chrono::hours(1);
    std::string error;
    auto w =
        RecordingWriter::create(options, testing::test_run_info(), testing::make_devices(2), error);
    if (!w) _exit(3);
    for (int i = 0; w->status().ticks_written < 600; ++i) {
      if (i < 600) w->on_tick(testing::make_tick(2, i, 1764446400000, 1000));
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;

  // A copy with one byte flipped in the page of a frame in the middle of the WAL's current
  // frames (SQLite restarts the WAL after a checkpoint: older frames may follow them).
  const detail::WalScan intact_scan = detail::scan_wal(path + "-wal");
  ASSERT_TRUE(intact_scan.header_ok);
  ASSERT_FALSE(intact_scan.damaged);
  const std::size_t frames = intact_scan.valid;
  ASSERT_GE(frames, 4U);
  const std::string copy = dir.file("damaged.gpumon");
  testing::write_file(copy, testing::read_file(path));
  std::string wal = testing::read_file(path + "-wal");
  const std::size_t page =
      (std::size_t{static_cast<unsigned char>(wal[10])} << 8) | static_cast<unsigned char>(wal[11]);
  const std::size_t frame_bytes = 24 + page;
  wal[32 + (frames / 2) * frame_bytes + 24 + page / 2] ^= 0x5A;
  testing::write_file(copy + "-wal", wal);

  std::string error;
  auto intact = RecordingReader::open(path, error);
  ASSERT_NE(intact, nullptr) << error;
  EXPECT_EQ(intact->warning(), "");
  auto damaged = RecordingReader::open(copy, error);
  ASSERT_NE(damaged, nullptr) << error;
  EXPECT_NE(
      damaged->warning().find("its -wal file is damaged at frame " +
                              std::to_string(frames / 2 + 1) + " of " + std::to_string(frames)),
      std::string::npos)
      << damaged->warning();
  EXPECT_EQ(read_everything(copy).find("error"), std::string::npos);  // what is left reads
}

}  // namespace
}  // namespace gpumon::record
