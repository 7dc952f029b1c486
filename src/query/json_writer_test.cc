// SPDX-License-Identifier: MIT
// The JSON / JSONL schema (docs/query.md): one document per sample, fields keyed by their
// canonical nvidia-smi names, numbers in base units, null plus a "missing" reason when absent.
#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>
#include <nlohmann/json.hpp>
#include <sstream>

#include "query/app_fields.h"
#include "query/gpu_fields.h"
#include "query/test_backend.h"
#include "query/value_format.h"

namespace gpumon::query::testing {
namespace {

using nlohmann::json;

// Runs with TZ set to a fixed zone (POSIX rule, needs no tz database) and restores it.
class FixedZone : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tz = std::getenv("TZ");
    saved_ = tz != nullptr ? std::optional<std::string>(tz) : std::nullopt;
    setenv("TZ", "CET-1", 1);
    tzset();
  }
  void TearDown() override {
    if (saved_)
      setenv("TZ", saved_->c_str(), 1);
    else
      unsetenv("TZ");
    tzset();
  }

 private:
  std::optional<std::string> saved_;
};

std::vector<json> lines_of(const std::string& text) {
  std::vector<json> docs;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) docs.push_back(json::parse(line));
  return docs;
}

TEST_F(FixedZone, TimestampsInBothFormats) {
  const LocalTime t = to_local_time(local_time("2026/11/29 18:46:37.888"));
  EXPECT_EQ(format_csv_timestamp(t), "2026/11/29 18:46:37.888");
  EXPECT_EQ(format_iso_timestamp(t), "2026-11-29T18:46:37.888+01:00");
  const LocalTime before_epoch = to_local_time(WallTime(std::chrono::milliseconds(-1)));
  EXPECT_EQ(format_iso_timestamp(before_epoch), "1970-01-01T00:59:59.999+01:00");
}

TEST_F(FixedZone, JsonlFlatOneObjectPerLineWithBaseUnits) {
  auto backend = std::shared_ptr<TestBackend>(h200_backend(2));
  backend->samples[1].fan_speed_pct = 55U;
  const RunResult r = run_query({"--query-gpu=index,gpu_name,memory.used,memory.free,power.draw,"
                                 "pstate,persistence_mode,clocks_event_reasons.gpu_idle,"
                                 "clocks_event_reasons.active,fan.speed,timestamp,pci.device_id",
                                 "--format=jsonl-flat"},
                                backend);
  ASSERT_EQ(r.rc, 0) << r.err;
  const auto docs = lines_of(r.out);
  ASSERT_EQ(docs.size(), 1U);
  const json& doc = docs[0];
  EXPECT_EQ(doc["timestamp"].get<std::string>().substr(23), "+01:00");
  EXPECT_TRUE(doc["simulated"].is_null());
  ASSERT_EQ(doc["gpus"].size(), 2U);
  const json& gpu = doc["gpus"][0];
  EXPECT_EQ(gpu["index"], 0);
  EXPECT_EQ(gpu["name"], "NVIDIA H200");  // the canonical name, though asked as gpu_name
  EXPECT_FALSE(gpu.contains("gpu_name"));
  EXPECT_EQ(gpu["memory.used"], 0);
  EXPECT_EQ(gpu["memory.free"], 150109880320ULL);  // bytes, not MiB
  EXPECT_DOUBLE_EQ(gpu["power.draw"].get<double>(), 78.91);
  EXPECT_EQ(gpu["pstate"], 0);
  EXPECT_EQ(gpu["persistence_mode"], true);
  EXPECT_EQ(gpu["clocks_event_reasons.gpu_idle"], true);
  EXPECT_EQ(gpu["clocks_event_reasons.active"], 1);
  EXPECT_EQ(gpu["pci.device_id"], "0x233510DE");
  EXPECT_EQ(gpu["timestamp"], "2026-11-29T18:46:42.317+01:00");
  EXPECT_TRUE(gpu["fan.speed"].is_null());
  EXPECT_EQ(gpu["missing"], (json{{"fan.speed", "not_supported"}}));
  EXPECT_EQ(doc["gpus"][1]["fan.speed"], 55);
  EXPECT_FALSE(doc["gpus"][1].contains("missing"));
  // Keys keep the order the fields were asked in.
  EXPECT_EQ(nlohmann::ordered_json::parse(r.out)["gpus"][0].begin().key(), "index");
}

TEST(JsonWriter, JsonIsIndentedOneDocumentPerSample) {
  auto backend = std::shared_ptr<TestBackend>(h200_backend());
  backend->system_info.simulated_scenario = "h200-idle";
  ManualClock clock;
  const RunResult r =
      run_query({"--query-gpu=index,memory.total", "--format=json-flat", "-lms", "100", "-c", "2"},
                backend, &clock);
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.err, "gpumon: simulated GPUs (scenario h200-idle)\n");
  // Two documents back to back, as `jq` reads a stream.
  std::istringstream in(r.out);
  json first, second;
  in >> first >> second;
  EXPECT_EQ(first["simulated"], "h200-idle");
  EXPECT_EQ(second["gpus"][0]["memory.total"], 150754820096ULL);
  EXPECT_NE(r.out.find("\n  \"gpus\": ["), std::string::npos);  // indented
}

TEST(JsonWriter, InvalidUtf8IsReplacedNotThrown) {
  auto backend = std::shared_ptr<TestBackend>(h200_backend());
  GpuProcess p;
  p.pid = 848;
  p.name = std::string("python\xff\xfe");
  p.used_memory_bytes = std::uint64_t{14} << 20;
  backend->process_lists[0] = std::vector<GpuProcess>{p};
  const RunResult r =
      run_query({"--query-compute-apps=pid,name,used_memory", "--format=jsonl-flat"}, backend);
  ASSERT_EQ(r.rc, 0) << r.err;
  const json doc = json::parse(r.out);
  EXPECT_EQ(doc["processes"][0]["pid"], 848);
  EXPECT_EQ(doc["processes"][0]["process_name"], "python\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(doc["processes"][0]["used_gpu_memory"], 14680064);
}

TEST(JsonWriter, LostGpuRowsCarryReasons) {
  auto backend = std::shared_ptr<TestBackend>(h200_backend(2));
  backend->lost[1] = true;
  const RunResult r =
      run_query({"--query-gpu=index,name,utilization.gpu", "--format=jsonl-flat"}, backend);
  ASSERT_EQ(r.rc, 0) << r.err;
  const json doc = json::parse(r.out);
  EXPECT_EQ(doc["gpus"][0]["utilization.gpu"], 0);
  const json& lost = doc["gpus"][1];
  EXPECT_EQ(lost["name"], "NVIDIA H200");  // static facts read at start still print
  EXPECT_TRUE(lost["utilization.gpu"].is_null());
  EXPECT_EQ(lost["missing"]["utilization.gpu"], "gpu_lost");
}

// nvidia-smi's shape (seed 001's get_gpu_info() reads it): a "gpu" list, objects nested by the
// dotted names, "product_name", values in the CSV's units as numbers, CSV's words as text.
TEST_F(FixedZone, JsonlNestsFieldsAsNvidiaSmiWithItsUnits) {
  auto backend = std::shared_ptr<TestBackend>(h200_backend(2));
  backend->samples[1].fan_speed_pct = 55U;
  const RunResult r = run_query({"--query-gpu=index,gpu_name,temperature.gpu,utilization.gpu,"
                                 "memory.used,memory.total,power.draw,power.draw.instant,pstate,"
                                 "persistence_mode,clocks_event_reasons.active,fan.speed,timestamp",
                                 "--format=jsonl"},
                                backend);
  ASSERT_EQ(r.rc, 0) << r.err;
  const auto docs = lines_of(r.out);
  ASSERT_EQ(docs.size(), 1U);
  const json& doc = docs[0];
  EXPECT_FALSE(doc.contains("gpus"));
  ASSERT_EQ(doc["gpu"].size(), 2U);
  const json& gpu = doc["gpu"][0];
  EXPECT_EQ(gpu["index"], 0);
  EXPECT_EQ(gpu["product_name"], "NVIDIA H200");
  EXPECT_TRUE(gpu["temperature"]["gpu"].is_number_unsigned());
  EXPECT_EQ(gpu["utilization"]["gpu"], 0);
  EXPECT_EQ(gpu["memory"]["used"], 0);
  EXPECT_EQ(gpu["memory"]["total"], 143771);  // MiB, as nvidia-smi's CSV
  EXPECT_DOUBLE_EQ(gpu["power"]["draw"].get<double>(), 78.91);
  EXPECT_TRUE(gpu["power"]["draw_instant"].is_number());
  EXPECT_EQ(gpu["pstate"], "P0");
  EXPECT_EQ(gpu["persistence_mode"], "Enabled");
  EXPECT_EQ(gpu["clocks_event_reasons"]["active"], "0x0000000000000001");
  EXPECT_EQ(gpu["timestamp"], "2026/11/29 18:46:42.317");
  EXPECT_TRUE(gpu["fan"]["speed"].is_null());
  EXPECT_EQ(gpu["missing"], (json{{"fan.speed", "not_supported"}}));  // the field's name
  EXPECT_EQ(doc["gpu"][1]["fan"]["speed"], 55);
}

TEST(JsonWriter, ProcessRowsAreProcessInfoInNvidiaSmisShape) {
  auto backend = std::shared_ptr<TestBackend>(h200_backend());
  GpuProcess p;
  p.pid = 848;
  p.name = std::string("python");
  p.used_memory_bytes = std::uint64_t{14} << 20;
  backend->process_lists[0] = std::vector<GpuProcess>{p};
  const RunResult r =
      run_query({"--query-compute-apps=pid,name,used_memory", "--format=json"}, backend);
  ASSERT_EQ(r.rc, 0) << r.err;
  const json doc = json::parse(r.out);
  EXPECT_EQ(doc["process_info"][0]["pid"], 848);
  EXPECT_EQ(doc["process_info"][0]["process_name"], "python");
  EXPECT_EQ(doc["process_info"][0]["used_gpu_memory"], 14);  // MiB
}

// A path that is both a value and an object could not be written: no field's nested path may
// lie under another's (power.draw and power.draw.instant are kept apart by json_path).
TEST(JsonWriter, NoNestedPathLiesUnderAnother) {
  const auto check = [](const auto& table) {
    for (const auto& a : table)
      for (const auto& b : table) {
        const std::string pa(nested_json_path(a.info)), pb(nested_json_path(b.info));
        EXPECT_FALSE(pb.size() > pa.size() && pb.compare(0, pa.size() + 1, pa + ".") == 0)
            << pb << " lies under " << pa;
      }
  };
  check(gpu_fields());
  check(app_fields());
}

}  // namespace
}  // namespace gpumon::query::testing
