// SPDX-License-Identifier: MIT
// gpumon query -q against nvidia-smi -q on the H200 (testdata/nvidia-smi/h200/modes/q*.txt):
// with the values of the capture, every line is nvidia-smi's byte for byte, except the values
// gpumon does not read, which must say N/A and be listed in kNotRead below.
#include "query/q_report.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "query/query_command.h"
#include "query/test_backend.h"

namespace gpumon::query {
namespace {

const std::string kModes = std::string(GPUMON_SOURCE_DIR) + "/testdata/nvidia-smi/h200/modes/";
constexpr std::uint64_t kMiB = 1024 * 1024;

// The capture without the "rc=N" line the probe added.
std::string capture(const std::string& name) {
  std::ifstream in(kModes + name);
  EXPECT_TRUE(in) << name;
  std::stringstream text;
  text << in.rdbuf();
  std::string s = text.str();
  const auto rc = s.rfind("rc=");
  return rc == std::string::npos ? s : s.substr(0, rc);
}

// The lines nvidia-smi fills that gpumon does not read, by their heading path.
const std::set<std::string> kNotRead = {
    // No public NVML call gives these (nvidia-smi reads them through a private table).
    "GPU PDI",
    "GPU Part Number",
    "Sparse Operation Mode",
};

// Compares line by line: headings and labels byte for byte; a value may differ only where
// gpumon says N/A of a line in kNotRead.
void expect_matches(const std::string& ours, const std::string& theirs) {
  std::istringstream a(ours), b(theirs);
  std::vector<std::string> path;  // headings by depth
  std::string x, y;
  int line = 0;
  while (true) {
    const bool more_a = static_cast<bool>(std::getline(a, x));
    const bool more_b = static_cast<bool>(std::getline(b, y));
    ++line;
    ASSERT_EQ(more_a, more_b) << "line " << line << ": ours '" << x << "', nvidia-smi's '" << y
                              << "'";
    if (!more_a) return;
    if (x == y) {
      const auto indent = y.find_first_not_of(' ');
      if (indent != std::string::npos && y.find(" : ") == std::string::npos && indent >= 4) {
        path.resize(indent / 4 - 1);
        path.push_back(y.substr(indent));
      }
      continue;
    }
    const auto colon = y.find(" : ");
    ASSERT_NE(colon, std::string::npos) << "line " << line << ": '" << x << "' vs '" << y << "'";
    ASSERT_EQ(x.substr(0, colon + 3), y.substr(0, colon + 3)) << "line " << line;
    const auto indent = y.find_first_not_of(' ');
    std::string key;
    for (std::size_t d = 0; d + 1 < indent / 4 && d < path.size(); ++d) key += path[d] + "/";
    const std::string label = y.substr(indent, colon - indent);
    key += label.substr(0, label.find_last_not_of(' ') + 1);
    EXPECT_EQ(x.substr(colon + 3), "N/A")
        << "line " << line << " (" << key << "): nvidia-smi '" << y.substr(colon + 3) << "'";
    EXPECT_TRUE(kNotRead.contains(key))
        << "line " << line << ": " << key << " is read, so '" << x << "' should be '" << y << "'";
  }
}

// The driver buffer of `n` samples `step_us` apart, all `fill` but the `peaks` at the start.
DriverSamples buffer(unsigned n, std::uint64_t step_us, double fill, std::vector<double> peaks) {
  DriverSamples out;
  for (unsigned i = 0; i < n; ++i) {
    out.samples.push_back({1'000'000'000'000 + i * step_us, i < peaks.size() ? peaks[i] : fill});
  }
  return out;
}

struct Fixture {
  SystemInfo system = testing::h200_system();
  DeviceStatic device = testing::h200_static();
  QGpu gpu;
  QHeader header;

  // The idle H200 of the 2026-12-03 capture, Thu Dec  3 05:23:43 2026.
  Fixture() {
    gpu.device = &device;
    gpu.sample = testing::h200_idle_sample();
    gpu.sample.temperature_gpu_c = 35U;
    gpu.sample.temperature_memory_c = 33U;
    gpu.sample.power_draw_average_w = 77.99;
    gpu.sample.power_draw_instant_w = 77.81;
    gpu.sample.pcie_replay_count = 0U;
    for (Reading<unsigned>* r :
         {&gpu.sample.remapped_rows_correctable, &gpu.sample.remapped_rows_uncorrectable,
          &gpu.sample.remapped_rows_pending, &gpu.sample.remapped_rows_failure})
      *r = 0U;
    gpu.pcie.tx_bytes_per_s = 1057.0 * 1024;
    gpu.pcie.rx_bytes_per_s = 619.0 * 1024;
    gpu.processes = std::vector<GpuProcess>{};
    gpu.details = testing::h200_report_details();
    header.local.tm_year = 2026 - 1900;
    header.local.tm_mon = 11;
    header.local.tm_mday = 3;
    header.local.tm_wday = 4;
    header.local.tm_hour = 5;
    header.local.tm_min = 23;
    header.local.tm_sec = 43;
    header.system = &system;
    header.attached = 1;
  }
  std::string report(unsigned display) const { return q_report(header, {gpu}, display); }
  void read_buffers() {
    // 71 samples over 14 s: one at 100 % and one at 113 % of the rest, mean 3.0 -> "3 %".
    gpu.buffer(DriverBuffer::kGpuUtilization) = buffer(71, 200'000, 0, {100, 100, 13});
    gpu.buffer(DriverBuffer::kMemoryUtilization) = buffer(71, 200'000, 0, {31});
    for (DriverBuffer b : {DriverBuffer::kEncoderUtilization, DriverBuffer::kDecoderUtilization,
                           DriverBuffer::kJpegUtilization, DriverBuffer::kOfaUtilization})
      gpu.buffer(b) = buffer(71, 200'000, 0, {});
    // An idle H200 keeps no clock sample: NVML answers NOT_FOUND, read as an empty buffer.
    gpu.buffer(DriverBuffer::kSmClock) = gpu.buffer(DriverBuffer::kMemoryClock) = DriverSamples{};
  }
};

TEST(QReport, WholeReportIsNvidiaSmis) {
  Fixture f;
  expect_matches(f.report(0), capture("q.txt"));
}

TEST(QReport, EachSectionIsNvidiaSmis) {
  Fixture f;
  expect_matches(f.report(kQMemory), capture("q-d-MEMORY.txt"));
  expect_matches(f.report(kQTemperature), capture("q-d-TEMPERATURE.txt"));
  expect_matches(f.report(kQPerformance), capture("q-d-PERFORMANCE.txt"));
  expect_matches(f.report(kQEcc), capture("q-d-ECC.txt"));
  expect_matches(f.report(kQPids), capture("q-d-PIDS.txt"));
  f.read_buffers();
  expect_matches(f.report(kQClock), capture("q-d-CLOCK.txt"));
  expect_matches(f.report(kQUtilization), capture("q-d-UTILIZATION.txt"));
  expect_matches(f.report(kQMemory | kQUtilization), capture("q-d-MEMORY,UTILIZATION.txt"));
}

// With ECC off, nvidia-smi shows every ECC count as N/A, whatever the driver answers.
TEST(QReport, EccCountsAreNaWithEccOff) {
  Fixture f;
  f.device.ecc_enabled = false;
  const std::string text = f.report(kQEcc);
  for (const char* line : {"            SRAM Correctable                           : N/A\n",
                           "            DRAM Uncorrectable                         : N/A\n",
                           "            SRAM Threshold Exceeded                    : N/A\n",
                           "            SRAM Other                                 : N/A\n"})
    EXPECT_NE(text.find(line), std::string::npos) << line << text;
  EXPECT_EQ(text.find(": 0\n"), std::string::npos) << text;
}

TEST(QReport, PowerShowsTheDriversPowerSamples) {
  Fixture f;
  f.gpu.sample.power_draw_average_w = 78.00;
  f.gpu.sample.power_draw_instant_w = 78.13;
  f.gpu.details.memory_power_average_w = 39.28;
  // 119 samples 20 ms apart: 2.36 s, 79.15 W and 77.15 W at the ends, mean 78.02 W.
  f.gpu.buffer(DriverBuffer::kPower) =
      buffer(119, 20'000, (78.02 * 119 - 79.15 - 77.15) / 117, {79.15, 77.15});
  expect_matches(f.report(kQPower), capture("q-d-POWER.txt"));
}

TEST(QReport, ProcessesAreListedAsNvidiaSmiDoes) {
  Fixture f;
  GpuProcess p;
  p.pid = 853;
  p.name = std::string("python3");
  p.used_memory_bytes = std::uint64_t{4038} * kMiB;
  p.gpu_instance_id = Reading<unsigned>::missing(Missing::kNotAvailable);
  p.compute_instance_id = Reading<unsigned>::missing(Missing::kNotAvailable);
  f.gpu.processes = std::vector<GpuProcess>{p};
  f.header.local.tm_min = 24;  // the busy capture was taken 23 s later
  f.header.local.tm_sec = 6;
  expect_matches(f.report(kQPids), capture("q-d-PIDS-busy.txt"));
}

TEST(QReport, MissingValuesSayWhy) {
  Fixture f;
  f.gpu.sample.temperature_gpu_c = Reading<unsigned>::missing(Missing::kGpuLost);
  f.gpu.processes = Reading<std::vector<GpuProcess>>::missing(Missing::kNoPermission);
  const std::string text = f.report(kQTemperature | kQPids);
  EXPECT_NE(text.find("GPU Current Temp                               : GPU is lost\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("    Processes                                          : "
                      "Insufficient Permissions\n"),
            std::string::npos)
      << text;
}

TEST(QReport, DisplayTakesNvidiaSmisSectionNames) {
  auto d = parse_q_display("MEMORY,UTILIZATION");
  ASSERT_TRUE(d);
  EXPECT_EQ(*d, kQMemory | kQUtilization);
  auto bad = parse_q_display("MEMORY,VOLTAGE");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("'VOLTAGE' is not a section gpumon shows; choose from "
                                     "MEMORY,UTILIZATION,"),
            std::string::npos)
      << bad.error().message;
  EXPECT_FALSE(parse_q_display(""));
  EXPECT_FALSE(parse_q_display("MEMORY,"));
}

TEST(QReport, ReadsOnlyWhatTheSectionsShow) {
  EXPECT_TRUE(q_metrics(kQMemory).has(MetricGroup::kMemory));
  EXPECT_FALSE(q_metrics(kQMemory).has(MetricGroup::kTemperature));
  EXPECT_TRUE(q_metrics(0).has(MetricGroup::kRemappedRows));
  EXPECT_FALSE(q_needs_processes(kQMemory));
  EXPECT_TRUE(q_needs_processes(0));
  EXPECT_TRUE(q_buffers(0).empty());
  EXPECT_TRUE(q_needs_report_details(0));
  EXPECT_TRUE(q_needs_report_details(kQEcc));
  EXPECT_FALSE(q_needs_report_details(kQTemperature | kQUtilization));
  EXPECT_EQ(q_buffers(kQClock), (std::vector{DriverBuffer::kSmClock, DriverBuffer::kMemoryClock}));
}

TEST(QReport, TheCommandPrintsTheReportOfTheChosenGpus) {
  testing::ManualClock clock;
  detail::QueryEnvironment env;
  env.clock = &clock;
  env.open_backend = [](QueryError*) -> std::unique_ptr<GpuBackend> {
    return testing::h200_backend(2);
  };
  std::ostringstream out, err;
  EXPECT_EQ(detail::run_query_command({"-q", "-i", "1", "-d", "MEMORY"}, out, err, env), 0)
      << err.str();
  const std::string text = out.str();
  EXPECT_NE(text.find("Attached GPUs                                          : 2\nGPU "
                      "00000000:19:00.0\n    FB Memory Usage\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("00000000:00:06.0"), std::string::npos) << text;
  EXPECT_TRUE(
      text.ends_with("Free                                           : 143156 MiB\n"
                     "    BAR1 Memory Usage\n"
                     "        Total                                          : 262144 MiB\n"
                     "        Used                                           : 1 MiB\n"
                     "        Free                                           : 262143 MiB\n"
                     "    Conf Compute Protected Memory Usage\n"
                     "        Total                                          : 0 MiB\n"
                     "        Used                                           : 0 MiB\n"
                     "        Free                                           : 0 MiB\n\n"))
      << text;

  std::ostringstream out2, err2;
  EXPECT_EQ(detail::run_query_command({"-q", "--format=csv"}, out2, err2, env), kExitUsage);
  EXPECT_NE(err2.str().find("it takes no fields or --format"), std::string::npos);
  std::ostringstream out3, err3;
  EXPECT_EQ(detail::run_query_command({"--query-gpu=name", "-d", "MEMORY"}, out3, err3, env),
            kExitUsage);
  EXPECT_NE(err3.str().find("-d/--display goes with -q/--query"), std::string::npos);
}

}  // namespace
}  // namespace gpumon::query
