// SPDX-License-Identifier: MIT
// gpumon dmon / pmon / query -L against nvidia-smi's own output on the H200
// (testdata/nvidia-smi/h200/modes): headers byte for byte, data lines byte for byte with the
// values of the capture, where the columns gpumon does not read are `-`.
#include "query/monitor_table.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "query/monitor_command.h"
#include "query/test_backend.h"

namespace gpumon::query {
namespace {

const std::string kModes = std::string(GPUMON_SOURCE_DIR) + "/testdata/nvidia-smi/h200/modes/";

// The lines of a capture, each with its '\n', without the trailing "rc=N" and blank lines.
std::vector<std::string> capture(const std::string& name) {
  std::ifstream in(kModes + name);
  EXPECT_TRUE(in) << name;
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line.starts_with("rc=")) continue;
    lines.push_back(line + "\n");
  }
  return lines;
}

// `line` with the 7-wide columns at `columns` (0 = the first after the GPU's, which starts at
// `first`) replaced by "-": nvidia-smi's value where gpumon prints that it does not read it.
std::string dashed(std::string line, std::initializer_list<int> columns, std::size_t first = 5) {
  for (int c : columns) line.replace(first + 7 * static_cast<std::size_t>(c), 7, "      -");
  return line;
}

std::tm at(int y, int mo, int d, int h, int mi, int s) {
  std::tm t{};
  t.tm_year = y - 1900, t.tm_mon = mo - 1, t.tm_mday = d, t.tm_hour = h, t.tm_min = mi,
  t.tm_sec = s;
  return t;
}

// The idle H200 of the dmon captures (2026-12-03).
DmonInput idle(double watts, unsigned gtemp, unsigned mtemp) {
  DmonInput in;
  in.sample.power_draw_w = watts;
  in.sample.temperature_gpu_c = gtemp;
  in.sample.temperature_memory_c = mtemp;
  for (Reading<unsigned>* r : {&in.sample.utilization_gpu_pct, &in.sample.utilization_memory_pct,
                               &in.sample.utilization_encoder_pct,
                               &in.sample.utilization_decoder_pct, &in.sample.utilization_jpeg_pct,
                               &in.sample.utilization_ofa_pct, &in.sample.pcie_replay_count})
    *r = 0U;
  in.sample.mem_clock_mhz = 3201U;
  in.sample.graphics_clock_mhz = 345U;
  in.sample.memory_used_bytes = std::uint64_t{0};
  in.sample.bar1_used_bytes = std::uint64_t{1} << 20;  // the H200's idle 1 MiB
  in.sample.ecc_corrected_volatile = std::uint64_t{0};
  in.sample.ecc_uncorrected_volatile = std::uint64_t{0};
  in.pcie.rx_bytes_per_s = 0.0;
  in.pcie.tx_bytes_per_s = 0.0;
  for (Reading<std::uint64_t>* r :
       {&in.sample.clock_event_sw_power_cap_ns, &in.sample.clock_event_sw_thermal_ns,
        &in.sample.clock_event_hw_thermal_ns})
    *r = std::uint64_t{0};
  return in;
}

TEST(Dmon, DefaultTableIsNvidiaSmis) {
  const auto ref = capture("dmon.txt");
  ASSERT_EQ(ref.size(), 5U);
  EXPECT_EQ(dmon_header("puc", {}), ref[0] + ref[1]);
  // 78.6 W is printed 78: NVML's milliwatts cut to whole watts.
  EXPECT_EQ(dmon_line("puc", {}, idle(78.6, 35, 34), {}), ref[2]);
  const auto busy = capture("dmon-busy.txt");
  DmonInput in = idle(692.4, 56, 43);
  in.sample.utilization_gpu_pct = 98U;
  in.sample.utilization_memory_pct = 24U;
  in.sample.graphics_clock_mhz = 1485U;
  EXPECT_EQ(dmon_line("puc", {}, in, {}), busy[2]);
}

TEST(Dmon, EverySelectionsHeaderAndLine) {
  for (const char* s : {"p", "u", "c", "v", "m", "e", "t", "pucvmet"}) {
    const auto ref =
        capture(std::string("dmon-s") + (std::string(s) == "pucvmet" ? "pucvmet" : s) + ".txt");
    ASSERT_GE(ref.size(), 3U) << s;
    EXPECT_EQ(dmon_header(s, {}), ref[0] + ref[1]) << s;
  }
  // The whole line, the column gpumon does not read dashed: ccpm.
  const auto all = capture("dmon-spucvmet.txt");
  EXPECT_EQ(dmon_line("pucvmet", {}, idle(77, 35, 33), {}), dashed(all[2], {15}));
  EXPECT_EQ(dmon_line("m", {}, idle(77, 35, 33), {}), dashed(capture("dmon-sm.txt")[2], {2}));
  // Busy on the H200 (docs/results/h200-2026-12-03-tlimit-bar1): 4243390464 bytes of FB used
  // printed 4047, BAR1's 4048.x MiB 4048.
  DmonInput busy = idle(77, 35, 33);
  busy.sample.memory_used_bytes = std::uint64_t{4243390464};
  busy.sample.bar1_used_bytes = (std::uint64_t{4048} << 20) + 4096;
  EXPECT_EQ(dmon_line("m", {}, busy, {}), "    0   4047   4048      - \n");
  EXPECT_EQ(dmon_line("e", {}, idle(77, 35, 33), {}), capture("dmon-se.txt")[2]);
  EXPECT_EQ(dmon_line("t", {}, idle(77, 35, 33), {}), capture("dmon-st.txt")[2]);
  // A value gpumon could not read is "-", not 0.
  DmonInput lost = idle(77, 35, 33);
  lost.sample.temperature_memory_c = Reading<unsigned>::missing(Missing::kNotSupported);
  EXPECT_EQ(dmon_line("p", {}, lost, {}), "    0     77     35      - \n");
}

// pviol and tviol are rates over the interval: 0 on the first line (nvidia-smi's, even at the
// power cap), then the share of the driver's time span the power cap held the clocks, and
// whether thermal slowdown held them at all. The capture: dmon -s pv at the H200's power cap.
TEST(Dmon, ViolationColumnsAreRatesOverTheInterval) {
  const auto ref = capture("dmon-spv-busy.txt");
  ASSERT_EQ(ref.size(), 8U);
  EXPECT_EQ(dmon_header("pv", {}), ref[0] + ref[1]);
  DmonInput first = idle(707.3, 64, 54);
  first.sample.clock_event_sw_power_cap_ns = std::uint64_t{898836000};
  EXPECT_EQ(dmon_line("pv", {}, first, {}), ref[2]);
  DmonInput next = idle(694.9, 66, 55);
  // The driver moves the counter in ~100 ms steps: 1.1 s of a 1 s span is 100, not 110.
  next.sample.clock_event_sw_power_cap_ns = std::uint64_t{898836000 + 1'100'000'000};
  next.sample.mono_time = first.sample.mono_time + std::chrono::seconds(1);
  next.previous = &first.sample;
  EXPECT_EQ(dmon_line("pv", {}, next, {}), ref[3]);
  // Half the span held, and a thermal slowdown in the interval. A counter that went back (a
  // driver reload) is 0.
  next.sample.clock_event_sw_power_cap_ns = std::uint64_t{898836000 + 500'000'000};
  next.sample.clock_event_hw_thermal_ns = std::uint64_t{1000};
  EXPECT_EQ(dmon_line("v", {}, next, {}), "    0     50      1 \n");
  next.sample.clock_event_sw_power_cap_ns = std::uint64_t{5};
  EXPECT_EQ(dmon_line("v", {}, next, {}), "    0      0      1 \n");
  // A GPU without the counters: "-".
  next.sample.clock_event_sw_power_cap_ns = Reading<std::uint64_t>::missing(Missing::kNotSupported);
  next.sample.clock_event_sw_thermal_ns = Reading<std::uint64_t>::missing(Missing::kNotSupported);
  next.sample.clock_event_hw_thermal_ns = Reading<std::uint64_t>::missing(Missing::kNotSupported);
  EXPECT_EQ(dmon_line("v", {}, next, {}), "    0      -      - \n");
}

TEST(Dmon, DateAndTimeColumns) {
  const auto ref = capture("dmon-o-DT.txt");
  const StampColumns dt{true, true};
  EXPECT_EQ(dmon_header("puc", dt), ref[0] + ref[1]);
  EXPECT_EQ(dmon_line("puc", dt, idle(77, 35, 33), at(2026, 12, 3, 5, 23, 54)), ref[2]);
}

TEST(Dmon, SelectionsAreChecked) {
  EXPECT_EQ(*parse_dmon_select("pucvmet"), "pucvmet");
  EXPECT_FALSE(parse_dmon_select("px"));
  EXPECT_FALSE(parse_dmon_select(""));
  EXPECT_FALSE(parse_pmon_select("p"));
  EXPECT_TRUE(dmon_metrics("e").has(MetricGroup::kPcieReplay));
  EXPECT_FALSE(dmon_metrics("puc").has(MetricGroup::kEcc));
  EXPECT_TRUE(dmon_needs_pcie("t") && !dmon_needs_pcie("puc"));
}

PmonProcess python3(unsigned sm, unsigned mem) {
  PmonProcess p;
  p.pid = 853;
  p.sm_pct = sm;
  p.mem_pct = mem;
  p.fb_bytes = std::uint64_t{4038} << 20;
  p.name = "python3";
  return p;
}

TEST(Pmon, TablesAreNvidiaSmis) {
  const auto idle_ref = capture("pmon-idle.txt");
  EXPECT_EQ(pmon_header("u", {}), idle_ref[0] + idle_ref[1]);
  EXPECT_EQ(pmon_line("u", {}, 0, std::nullopt, {}), idle_ref[2]);
  const auto busy = capture("pmon-busy.txt");
  EXPECT_EQ(pmon_line("u", {}, 0, python3(0, 0), {}), busy[3]);
  EXPECT_EQ(pmon_line("u", {}, 0, python3(58, 14), {}), busy[4]);
  const auto sum = capture("pmon-busy-sum.txt");
  EXPECT_EQ(pmon_header("um", {}), sum[0] + sum[1]);
  // ccpm (CC protected memory) is not read: "-" where nvidia-smi says 0.
  EXPECT_EQ(pmon_line("um", {}, 0, python3(58, 14), {}), dashed(sum[2], {7}, 22));
}

TEST(Pmon, ProcessesTakeTheirNewestUtilizationSample) {
  GpuProcess a;
  a.pid = 853;
  a.name = std::string("/usr/bin/python3");
  a.used_memory_bytes = std::uint64_t{1} << 30;
  GpuProcess b;
  b.pid = 900;
  b.name = Reading<std::string>::missing(Missing::kNoPermission);
  const auto rows = pmon_processes({a, b}, {{853, 10, 20, 5}, {853, 30, 58, 14}, {7, 40, 1, 1}});
  ASSERT_EQ(rows.size(), 2U);
  EXPECT_EQ(rows[0].name, "python3");
  EXPECT_EQ(rows[0].sm_pct, 58U);
  EXPECT_EQ(rows[0].mem_pct, 14U);
  EXPECT_EQ(rows[0].fb_bytes, std::uint64_t{1} << 30);
  EXPECT_FALSE(rows[1].sm_pct);  // no sample in the interval: "-"
  EXPECT_EQ(rows[1].name, "-");
}

struct Outcome {
  int code;
  std::string out, err;
};

Outcome run_monitor(MonitorKind kind, const std::vector<std::string>& args,
                    testing::TestBackend* keep = nullptr, unsigned gpus = 2) {
  testing::ManualClock clock;
  detail::QueryEnvironment env;
  env.clock = &clock;
  env.open_backend = [&](QueryError*) -> std::unique_ptr<GpuBackend> {
    auto b = testing::h200_backend(gpus);
    if (keep != nullptr) {
      b->process_lists = keep->process_lists;
    }
    return b;
  };
  std::ostringstream out, err;
  const int code = detail::run_monitor_command(kind, args, out, err, env);
  return {code, out.str(), err.str()};
}

TEST(MonitorCommand, DmonPrintsTheHeaderOnceThenALinePerGpuPerSample) {
  const Outcome r = run_monitor(MonitorKind::kDmon, {"-c", "2", "-s", "pe"});
  EXPECT_EQ(r.code, 0) << r.err;
  std::istringstream lines(r.out);
  std::vector<std::string> got;
  for (std::string l; std::getline(lines, l);) got.push_back(l);
  ASSERT_EQ(got.size(), 2U + 2 * 2) << r.out;
  EXPECT_EQ(got[0], "# gpu    pwr  gtemp  mtemp  sbecc  dbecc    pci ");
  EXPECT_TRUE(got[2].starts_with("    0 ")) << got[2];
  EXPECT_TRUE(got[3].starts_with("    1 ")) << got[3];
  const Outcome one = run_monitor(MonitorKind::kDmon, {"-c", "1", "-i", "1"});
  EXPECT_EQ(std::count(one.out.begin(), one.out.end(), '\n'), 3);
  EXPECT_NE(one.out.find("\n    1 "), std::string::npos);
}

TEST(MonitorCommand, PmonShowsADashLineForAGpuWithoutProcesses) {
  testing::TestBackend procs;
  GpuProcess p;
  p.pid = 4242;
  p.name = std::string("/opt/train/python3.11");
  p.used_memory_bytes = std::uint64_t{2} << 30;
  procs.process_lists = {Reading<std::vector<GpuProcess>>(std::vector<GpuProcess>{p}),
                         Reading<std::vector<GpuProcess>>(std::vector<GpuProcess>{})};
  const Outcome r = run_monitor(MonitorKind::kPmon, {"-c", "1", "-s", "um"}, &procs);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("    0       4242     C      -      -      -      -      -      -   2048"
                       "      -    python3.11     \n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("    1          -     -"), std::string::npos) << r.out;
}

TEST(MonitorCommand, BadOptionsSayWhatIsWrong) {
  EXPECT_EQ(run_monitor(MonitorKind::kDmon, {"-s", "x"}).err,
            "gpumon: dmon: -s takes letters of 'pucvmet', not 'x'.\n");
  EXPECT_EQ(run_monitor(MonitorKind::kPmon, {"-d", "11"}).err,
            "gpumon: pmon: -d takes whole seconds from 1 to 10, not '11'.\n");
  EXPECT_EQ(run_monitor(MonitorKind::kDmon, {"-o", "X"}).code, kExitUsage);
  EXPECT_EQ(run_monitor(MonitorKind::kDmon, {"-c"}).err, "gpumon: dmon: -c needs a value.\n");
  EXPECT_NE(run_monitor(MonitorKind::kDmon, {"--format", "csv"}).err.find("gpumon query"),
            std::string::npos);
  EXPECT_EQ(run_monitor(MonitorKind::kDmon, {"-i", "7"}).code, kExitNoDevice);
  const Outcome help = run_monitor(MonitorKind::kPmon, {"--help"});
  EXPECT_EQ(help.code, 0);
  EXPECT_TRUE(help.out.starts_with("usage: gpumon pmon"));
}

TEST(QueryList, IsNvidiaSmiL) {
  testing::ManualClock clock;
  detail::QueryEnvironment env;
  env.clock = &clock;
  env.open_backend = [](QueryError*) -> std::unique_ptr<GpuBackend> {
    return testing::h200_backend(1);
  };
  std::ostringstream out, err;
  EXPECT_EQ(detail::run_query_command({"-L"}, out, err, env), 0) << err.str();
  EXPECT_EQ(out.str(), capture("list.txt")[0]);
  std::ostringstream out2, err2;
  EXPECT_EQ(detail::run_query_command({"-L", "--format=csv"}, out2, err2, env), kExitUsage);
}

}  // namespace
}  // namespace gpumon::query
