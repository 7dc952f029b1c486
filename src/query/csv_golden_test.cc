// SPDX-License-Identifier: MIT
// Golden tests: gpumon query's CSV must equal, byte for byte, what nvidia-smi printed on the
// H200 (testdata/nvidia-smi/h200), for every captured field in all four format variants.
#include <gtest/gtest.h>

#include <fstream>
#include <locale>
#include <map>
#include <sstream>

#include "query/test_backend.h"
#include "query/value_format.h"

namespace gpumon::query::testing {
namespace {

const std::string kCaptures = std::string(GPUMON_SOURCE_DIR) + "/testdata/nvidia-smi/h200/";

struct Block {
  std::string title;  // what follows "### "
  std::string output;
  int rc = -1;
};

// Splits a capture file into "### title" blocks ending with "rc=N".
std::vector<Block> read_blocks(const std::string& file) {
  std::ifstream in(kCaptures + file);
  EXPECT_TRUE(in) << "missing " << kCaptures + file;
  std::vector<Block> blocks;
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("### ", 0) == 0) {
      blocks.push_back(Block{line.substr(4), "", -1});
    } else if (!blocks.empty() && line.rfind("rc=", 0) == 0 && blocks.back().rc < 0) {
      blocks.back().rc = std::stoi(line.substr(3));
    } else if (!blocks.empty() && blocks.back().rc < 0) {
      blocks.back().output += line + "\n";
    }
  }
  return blocks;
}

std::string last_line(const std::string& text) {
  std::string t = text.substr(0, text.size() - 1);
  return t.substr(t.rfind('\n') + 1);
}

// The capture's args: "--query-gpu=F --format=FMT".
std::pair<std::string, std::string> split_title(const std::string& title) {
  const auto space = title.find(' ');
  return {title.substr(0, space), title.substr(space + 1)};
}

TEST(CsvGolden, EveryCapturedFieldInEveryFormatVariant) {
  const auto blocks = read_blocks("fields.txt");
  ASSERT_GT(blocks.size(), 150U);
  int compared = 0;
  for (const Block& block : blocks) {
    const auto [query, format] = split_title(block.title);
    const std::string field = query.substr(query.find('=') + 1);
    auto backend = std::shared_ptr<TestBackend>(h200_backend());
    DeviceSample& s = backend->samples[0];
    const std::string value = last_line(block.output);
    // Values that changed between the captures are taken from the capture itself; the test is
    // about how they are rendered.
    if (field == "timestamp") s.wall_time = local_time(value);
    if (field == "power.draw") s.power_draw_w = std::stod(value);
    if (field == "power.draw.instant") s.power_draw_instant_w = std::stod(value);
    if (field == "power.draw.average") s.power_draw_average_w = std::stod(value);
    const RunResult r = run_query({query, format}, backend);
    EXPECT_EQ(r.rc, block.rc) << block.title;
    EXPECT_EQ(r.out, block.output) << block.title;
    EXPECT_EQ(r.err, "") << block.title;
    ++compared;
  }
  EXPECT_GE(compared, 160);
}

// testdata/nvidia-smi/h200/modes/field-F.txt (csv) and field-F-nounits.txt
// (csv,noheader,nounits), without their closing "rc=N" line.
std::string mode_capture(const std::string& name) {
  std::ifstream in(kCaptures + "modes/" + name);
  EXPECT_TRUE(in) << "missing " << kCaptures + "modes/" + name;
  std::string text, line;
  while (std::getline(in, line)) {
    if (line.rfind("rc=", 0) == 0) break;
    text += line + "\n";
  }
  return text;
}

TEST(CsvGolden, ExtraFieldsEachAlone) {
  for (const char* field : {"vbios_version",
                            "compute_mode",
                            "mig.mode.current",
                            "mig.mode.pending",
                            "pcie.link.gen.max",
                            "pcie.link.gen.gpumax",
                            "pcie.link.width.max",
                            "pcie.link.gen.current",
                            "pcie.link.gen.gpucurrent",
                            "pcie.link.width.current",
                            "utilization.encoder",
                            "utilization.decoder",
                            "power.draw.average",
                            "inforom.img",
                            "display_active",
                            "accounting.mode",
                            "display_mode",
                            "persistence_mode",
                            "fan.speed",
                            "ecc.mode.pending",
                            "pci.sub_device_id",
                            "pci.baseClass",
                            "pci.subClass",
                            "accounting.buffer_size",
                            "inforom.oem",
                            "inforom.ecc",
                            "inforom.pwr",
                            "inforom.power",
                            "addressing_mode",
                            "platform.module_id"}) {
    auto backend = std::shared_ptr<TestBackend>(h200_backend());
    const std::string query = std::string("--query-gpu=") + field;
    const std::string csv = mode_capture(std::string("field-") + field + ".txt");
    const std::string nounits = mode_capture(std::string("field-") + field + "-nounits.txt");
    // The power moved between the two captures: each run takes its capture's value.
    const bool power = std::string(field) == "power.draw.average";
    if (power) backend->samples[0].power_draw_average_w = std::stod(last_line(csv));
    // The module id is the baseboard slot: this capture's H200 sat in slot 2, -q's in 3.
    if (std::string(field) == "platform.module_id")
      backend->statics[0].module_id = static_cast<unsigned>(std::stoul(last_line(csv)));
    RunResult r = run_query({query, "--format=csv"}, backend);
    EXPECT_EQ(r.rc, 0) << field;
    EXPECT_EQ(r.out, csv) << field;
    if (power) backend->samples[0].power_draw_average_w = std::stod(nounits);
    r = run_query({query, "--format=csv,noheader,nounits"}, backend);
    EXPECT_EQ(r.out, nounits) << field;
  }
}

// Every nvidia-smi compute mode in nvidia-smi's words; a fact NVML could not give is its reason,
// never 0 or "Disabled" (a GPU without MIG reads [N/A], as nvidia-smi prints it).
TEST(CsvGolden, ComputeModesAndMissingStaticFacts) {
  const char* names[] = {"Default", "Exclusive_Thread", "Prohibited", "Exclusive_Process"};
  for (unsigned mode = 0; mode < 4; ++mode) {
    auto backend = std::shared_ptr<TestBackend>(h200_backend());
    backend->statics[0].compute_mode = mode;
    EXPECT_EQ(run_query({"--query-gpu=compute_mode", "--format=csv,noheader"}, backend).out,
              std::string(names[mode]) + "\n");
  }
  auto backend = std::shared_ptr<TestBackend>(h200_backend());
  DeviceStatic& d = backend->statics[0];
  d.mig_mode_current = d.mig_mode_pending = Reading<bool>::missing(Missing::kNotSupported);
  d.vbios_version = Reading<std::string>::missing(Missing::kNotSupported);
  d.compute_mode = Reading<unsigned>::missing(Missing::kNoPermission);
  d.pcie_link_gen_max = d.pcie_link_gen_gpu_max = d.pcie_link_width_max =
      Reading<unsigned>::missing(Missing::kNotSupported);
  const RunResult r = run_query({"--query-gpu=mig.mode.current,mig.mode.pending,vbios_version,"
                                 "compute_mode,pcie.link.gen.max,pcie.link.gen.gpumax,"
                                 "pcie.link.width.max",
                                 "--format=csv,noheader"},
                                backend);
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(r.out,
            "[N/A], [N/A], [Not Supported], [Insufficient Permissions], [Not Supported], "
            "[Not Supported], [Not Supported]\n");
}

// The "all" captures list fields by the names they were asked with (aliases included).
const std::string kAllFields =
    "--query-gpu=timestamp,index,name,gpu_name,uuid,gpu_uuid,serial,pci.bus_id,gpu_bus_id,"
    "driver_version,pstate,fan.speed,temperature.gpu,temperature.memory,utilization.gpu,"
    "utilization.memory,memory.total,memory.used,memory.free,memory.reserved,power.draw,"
    "power.draw.instant,power.draw.average,power.limit,enforced.power.limit,clocks.sm,clocks."
    "current.sm,"
    "clocks.mem,clocks.current.memory,clocks.gr,clocks.max.sm,clocks.max.memory,clocks.max.gr,"
    "clocks_event_reasons.active,clocks_throttle_reasons.active,"
    "clocks_event_reasons.sw_power_cap,clocks_event_reasons.hw_thermal_slowdown,"
    "ecc.errors.corrected.volatile.total,ecc.errors.uncorrected.volatile.total,"
    "ecc.mode.current,persistence_mode,count,pci.device_id,compute_mode";

std::map<std::string, Block> by_title(const std::string& file) {
  std::map<std::string, Block> out;
  for (const Block& b : read_blocks(file)) out[b.title] = b;
  return out;
}

TEST(CsvGolden, AllFieldsOnOneLineIdle) {
  auto cases = by_title("cases.txt");
  for (const char* title : {"all csv", "all nounits"}) {
    auto backend = std::shared_ptr<TestBackend>(h200_backend());
    const std::string expected = cases.at(title).output;
    const std::string row = last_line(expected);
    backend->samples[0].wall_time = local_time(row.substr(0, row.find(',')));
    const RunResult r = run_query(
        {kAllFields, std::string("--format=csv") + (title[4] == 'n' ? ",nounits" : "")}, backend);
    EXPECT_EQ(r.rc, 0);
    EXPECT_EQ(r.out, expected) << title;
  }
}

TEST(CsvGolden, AllFieldsOnOneLineBusy) {
  auto busy = by_title("busy.txt");
  const std::string expected = busy.at("busy all").output;
  const std::string row = last_line(expected);
  auto backend = std::shared_ptr<TestBackend>(h200_backend());
  DeviceSample& s = backend->samples[0];
  s.wall_time = local_time(row.substr(0, row.find(',')));
  constexpr std::uint64_t kMiB = 1ULL << 20;
  s.memory_used_bytes = 21 * kMiB + 5;  // 21.000005 MiB prints 22
  s.memory_free_bytes = 143135 * kMiB;
  s.power_draw_w = 80.55;
  s.power_draw_instant_w = 123.69;
  s.power_draw_average_w = 80.55;
  s.sm_clock_mhz = s.graphics_clock_mhz = 1980U;
  s.clock_event_reasons = std::uint64_t{0};
  const RunResult r = run_query({kAllFields, "--format=csv"}, backend);
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(r.out, expected);
}

// nvidia-smi rounds memory up to whole MiB (measured on the H200: 615.0625 MiB prints 616,
// 139827.125 MiB prints 139828).
TEST(CsvCell, MemoryRoundsUpToWholeMiB) {
  FieldInfo mib{"memory.used", {}, "MiB", "bytes", CsvStyle::kMib, "", false, false};
  auto cell = [&](std::uint64_t bytes) { return csv_cell(Cell(Scalar(bytes)), mib, true); };
  EXPECT_EQ(cell(0), "0 MiB");
  EXPECT_EQ(cell(1), "1 MiB");
  EXPECT_EQ(cell(1048576), "1 MiB");
  EXPECT_EQ(cell(1048577), "2 MiB");
  EXPECT_EQ(cell(644939776), "616 MiB");
  EXPECT_EQ(cell(146619367424), "139828 MiB");
  EXPECT_EQ(cell(UINT64_MAX), "17592186044416 MiB");
  EXPECT_EQ(csv_cell(Cell(Scalar(std::uint64_t{1048577})), mib, false), "2");
}

// A German-style locale (decimal comma, thousands dot) must not leak into the output: every
// number goes through fmt / to_chars, never through iostreams' locale.
struct CommaDecimal : std::numpunct<char> {
  char do_decimal_point() const override { return ','; }
  char do_thousands_sep() const override { return '.'; }
  std::string do_grouping() const override { return "\3"; }
};

TEST(CsvGolden, LocaleDoesNotChangeNumbers) {
  const std::locale previous =
      std::locale::global(std::locale(std::locale::classic(), new CommaDecimal));
  auto backend = std::shared_ptr<TestBackend>(h200_backend());
  const RunResult csv = run_query({"--query-gpu=power.draw,memory.total", "--format=csv"}, backend);
  const RunResult json =
      run_query({"--query-gpu=power.draw,memory.total", "--format=jsonl-flat"}, backend);
  std::locale::global(previous);
  EXPECT_EQ(csv.out, "power.draw [W], memory.total [MiB]\n78.91 W, 143771 MiB\n");
  EXPECT_NE(json.out.find("\"power.draw\":78.91,\"memory.total\":150754820096"), std::string::npos)
      << json.out;
}

}  // namespace
}  // namespace gpumon::query::testing
