// SPDX-License-Identifier: MIT
// run_query_command end to end over an in-memory backend: the nvidia-smi cases captured in
// testdata/nvidia-smi/h200/cases.txt, errors and exit codes, lost GPUs, loops, signals, pipes.
#include "query/query_command.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <streambuf>

#include "query/test_backend.h"

namespace gpumon::query::testing {
namespace {

std::shared_ptr<TestBackend> h200(unsigned gpus = 1) {
  return h200_backend(gpus);
}

TEST(QueryCommand, IdFormsFromTheCapture) {
  const std::string expected = "index, name\n0, NVIDIA H200\n";
  for (const char* id :
       {"0", "0,0", "GPU-5ca1ab1e-0000-4000-8000-000000000000", "00000000:00:06.0", "00:06.0"}) {
    const RunResult r = run_query({"--query-gpu=index,name", "--format=csv", "-i", id}, h200());
    EXPECT_EQ(r.rc, 0) << id;
    EXPECT_EQ(r.out, expected) << id;
  }
  for (const char* id : {"7", "abc"}) {
    const RunResult r = run_query({"--query-gpu=index", "-i", id}, h200());
    EXPECT_EQ(r.rc, 6) << id;
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err.rfind("No devices were found\n", 0), 0U) << r.err;
  }
}

TEST(QueryCommand, SelectedGpusInIndexOrder) {
  const RunResult r =
      run_query({"--query-gpu=index,count", "--format=csv,noheader", "--id=2,0"}, h200(3));
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(r.out, "0, 3\n2, 3\n");  // count is every GPU in the system, not the selection
}

TEST(QueryCommand, NoFormatMeansCsv) {
  const RunResult r = run_query({"--query-gpu=index"}, h200());
  EXPECT_EQ(r.out, "index\n0\n");
}

TEST(QueryCommand, UsageErrorsExitTwoBeforeTouchingTheGpu) {
  auto backend = h200();
  RunResult r = run_query({"--query-gpu=bogus.field", "--format=csv"}, backend);
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.err, "Field \"bogus.field\" is not a valid field to query.\n\n");
  EXPECT_EQ(r.out, "");
  r = run_query({"--query-gpu=index", "--format=csv,bogus"}, backend);
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.err.rfind("Format modifier is not recognized.\n", 0), 0U);
  r = run_query({"--query-gpu", " , ", "--format=csv"}, backend);
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("names no field"), std::string::npos);
  r = run_query({"--query-gpu=", "--format=csv"}, backend);
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("--query-gpu names no field"), std::string::npos) << r.err;
  r = run_query({"--query-compute-apps=pid,bogus"}, backend);
  EXPECT_EQ(r.rc, 2);
  EXPECT_TRUE(backend->requests.empty());
}

TEST(QueryCommand, NoDriverIsOneLineAndNvidiaSmisExitNine) {
  const RunResult r = run_query({"--query-gpu=index"}, nullptr);
  EXPECT_EQ(r.rc, 9);
  EXPECT_EQ(r.err.rfind("gpumon: cannot load NVML", 0), 0U);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1);
}

TEST(QueryCommand, OpenFailuresExitAsNvidiaSmiDoes) {
  using K = NvmlOpenError::Kind;
  EXPECT_EQ(detail::open_failure({K::kNoDriver, 0, "x"}).exit_code, 9);
  EXPECT_EQ(detail::open_failure({K::kBadLibrary, 0, "x"}).exit_code, 12);
  EXPECT_EQ(detail::open_failure({K::kInitFailed, NVML_ERROR_DRIVER_NOT_LOADED, "x"}).exit_code, 9);
  EXPECT_EQ(detail::open_failure({K::kInitFailed, NVML_ERROR_NO_PERMISSION, "x"}).exit_code, 4);
  EXPECT_EQ(detail::open_failure({K::kInitFailed, NVML_ERROR_UNKNOWN, "x"}).exit_code, 255);
  EXPECT_EQ(detail::open_failure({K::kNoDriver, 0, "no driver"}).message, "gpumon: no driver\n");
}

TEST(QueryCommand, NoGpusAtAll) {
  auto empty = std::make_shared<TestBackend>();
  const RunResult r = run_query({"--query-gpu=index"}, empty);
  EXPECT_EQ(r.rc, 6);
  EXPECT_EQ(r.err, "No devices were found\n");
}

TEST(QueryCommand, HelpTextsNeedNoGpu) {
  RunResult r = run_query({"--help-query-gpu"}, nullptr);
  EXPECT_EQ(r.rc, 0);
  EXPECT_NE(r.out.find("clocks.current.sm, clocks.sm  [CSV: MHz; JSON: MHz]"), std::string::npos);
  EXPECT_NE(r.out.find("energy.total, energy, total_energy_consumption"), std::string::npos);
  r = run_query({"--help-query-compute-apps"}, nullptr);
  EXPECT_NE(r.out.find("used_gpu_memory, used_memory  [CSV: MiB; JSON: bytes]"), std::string::npos);
  r = run_query({"-h"}, nullptr);
  EXPECT_EQ(r.rc, 0);
  EXPECT_NE(r.out.find("--query-compute-apps"), std::string::npos);
}

TEST(QueryCommand, AsksTheBackendOnlyForWhatTheFieldsNeed) {
  auto backend = h200();
  run_query({"--query-gpu=index,name,memory.total"}, backend);
  ASSERT_EQ(backend->requests.size(), 1U);
  EXPECT_TRUE(backend->requests[0].empty());  // static facts read at open: no NVML reads
  backend->requests.clear();
  // Max clocks and modes are slow static facts (3 ms a call on an H200): asked only when needed.
  run_query({"--query-gpu=index,clocks.max.sm"}, backend);
  ASSERT_EQ(backend->requests.size(), 1U);
  EXPECT_EQ(backend->requests[0].bits(), MetricSet(MetricGroup::kStaticDetails).bits());
  backend->requests.clear();
  run_query({"--query-gpu=memory.used,power.draw.instant,clocks_event_reasons.sw_power_cap"},
            backend);
  ASSERT_EQ(backend->requests.size(), 1U);
  const MetricSet want =
      MetricSet(MetricGroup::kMemory) | MetricGroup::kPowerInstant | MetricGroup::kClockEvents;
  EXPECT_EQ(backend->requests[0].bits(), want.bits());
}

TEST(QueryCommand, LostGpuRowsKeepPrintingWhileOthersContinue) {
  auto backend = h200(2);
  ManualClock clock;
  int samples = 0;
  backend->on_sample = [&](unsigned index) {
    if (index == 0 && ++samples == 2) backend->lost[1] = true;  // GPU 1 falls off the bus
  };
  const RunResult r = run_query({"--query-gpu=index,name,utilization.gpu,power.draw",
                                 "--format=csv,noheader", "-lms", "200", "-c", "2"},
                                backend, &clock);
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(r.out,
            "0, NVIDIA H200, 0 %, 78.91 W\n"
            "1, NVIDIA H200, 0 %, 78.91 W\n"
            "0, NVIDIA H200, 0 %, 78.91 W\n"
            "1, NVIDIA H200, [GPU is lost], [GPU is lost]\n");
}

TEST(QueryCommand, LoopPrintsTheHeaderOnceAndFollowsTheSchedule) {
  auto backend = h200();
  ManualClock clock;
  const RunResult r =
      run_query({"--query-gpu=index", "--format=csv", "-l", "1", "-c", "3"}, backend, &clock);
  EXPECT_EQ(r.out, "index\n0\n0\n0\n");
  ASSERT_EQ(clock.sleeps.size(), 2U);
  EXPECT_EQ(clock.sleeps[1] - clock.sleeps[0], std::chrono::seconds(1));
}

TEST(QueryCommand, ComputeApps) {
  auto backend = h200(2);
  GpuProcess p;
  p.pid = 848;
  p.gpu_index = 1;
  p.name = std::string("python3");
  p.used_memory_bytes = std::uint64_t{14} << 20;
  backend->process_lists[1] = std::vector<GpuProcess>{p};
  RunResult r = run_query(
      {"--query-compute-apps=pid,process_name,gpu_bus_id,used_memory,gpu_index", "--format=csv"},
      backend);
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(r.out,
            "pid, process_name, gpu_bus_id, used_gpu_memory [MiB], gpu_index\n"
            "848, python3, 00000000:19:00.0, 14 MiB, 1\n");
  // Idle: the header alone, as nvidia-smi prints it.
  r = run_query({"--query-compute-apps=pid,process_name,gpu_uuid,gpu_bus_id,used_gpu_memory,"
                 "gpu_name,gpu_serial",
                 "--format=csv", "-i", "0"},
                backend);
  EXPECT_EQ(r.out,
            "pid, process_name, gpu_uuid, gpu_bus_id, used_gpu_memory [MiB], gpu_name, "
            "gpu_serial\n");
  // A GPU whose list cannot be read is noted once on stderr, never in the CSV.
  backend->lost[0] = true;
  ManualClock clock;
  r = run_query({"--query-compute-apps=pid", "--format=csv,noheader", "-lms", "10", "-c", "3"},
                backend, &clock);
  EXPECT_EQ(r.out, "848\n848\n848\n");
  EXPECT_EQ(r.err, "gpumon: GPU 0: cannot list compute processes (GPU is lost)\n");
}

TEST(QueryCommand, FilenameOverwritesTheFile) {
  const std::string path = ::testing::TempDir() + "gpumon_query_out.csv";
  { std::ofstream(path) << "old content that is longer than the new one\n"; }
  const RunResult r = run_query({"--query-gpu=index", "--format=csv,noheader", "-f", path}, h200());
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(r.out, "");
  std::ifstream in(path);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "0\n");
  std::remove(path.c_str());
  const RunResult bad = run_query({"--query-gpu=index", "-f", "/nonexistent/dir/x.csv"}, h200());
  EXPECT_EQ(bad.rc, 2);
  EXPECT_NE(bad.err.find("cannot open /nonexistent/dir/x.csv"), std::string::npos);
}

// An unbuffered streambuf over a file descriptor: write errors reach the ostream at once.
class FdBuf : public std::streambuf {
 public:
  explicit FdBuf(int fd) : fd_(fd) {}

 protected:
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    const char ch = traits_type::to_char_type(c);
    return ::write(fd_, &ch, 1) == 1 ? c : traits_type::eof();
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    const ssize_t w = ::write(fd_, s, static_cast<std::size_t>(n));
    return w < 0 ? 0 : w;
  }

 private:
  int fd_;
};

detail::QueryEnvironment real_clock_env(const std::shared_ptr<TestBackend>& backend) {
  detail::QueryEnvironment env;
  env.open_backend = [backend](QueryError*) -> std::unique_ptr<GpuBackend> {
    struct Shared final : GpuBackend {
      std::shared_ptr<TestBackend> b;
      const SystemInfo& system() const override { return b->system(); }
      unsigned device_count() const override { return b->device_count(); }
      const DeviceStatic& device(unsigned i) const override { return b->device(i); }
      DeviceSample sample(unsigned i, MetricSet w) override { return b->sample(i, w); }
      Reading<std::vector<GpuProcess>> processes(unsigned i) override { return b->processes(i); }
    };
    auto s = std::make_unique<Shared>();
    s->b = backend;
    return s;
  };
  return env;  // clock nullptr: the steady clock with the signal handlers installed
}

TEST(QueryCommand, ClosedPipeEndsQuietlyWithExitZero) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  close(fds[0]);  // the reader is gone, like `| head -3` after three lines
  FdBuf buf(fds[1]);
  std::ostream out(&buf);
  std::ostringstream err;
  const int rc = detail::run_query_command({"--query-gpu=index", "-lms", "1"}, out, err,
                                           real_clock_env(h200()));
  close(fds[1]);
  EXPECT_EQ(rc, 0);
  EXPECT_EQ(err.str(), "");
  EXPECT_EQ(signal(SIGPIPE, SIG_DFL), SIG_DFL);  // the handler was restored
}

TEST(QueryCommand, SigintStopsTheLoopCleanly) {
  auto backend = h200();
  int samples = 0;
  backend->on_sample = [&](unsigned) {
    if (++samples == 3) std::raise(SIGINT);
  };
  std::ostringstream out, err;
  const int rc =
      detail::run_query_command({"--query-gpu=index", "--format=csv,noheader", "-lms", "5"}, out,
                                err, real_clock_env(backend));
  EXPECT_EQ(rc, 0);
  EXPECT_EQ(out.str(), "0\n0\n0\n");  // the sample in progress is finished and flushed
  EXPECT_EQ(err.str(), "");
}

}  // namespace
}  // namespace gpumon::query::testing
