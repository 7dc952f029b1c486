// SPDX-License-Identifier: MIT
#include "exporter/history_columns.h"

#include <gtest/gtest.h>

#include <limits>
#include <nlohmann/json.hpp>

namespace gpumon::exporter {
namespace {

using nlohmann::json;

TEST(HistoryColumns, FloatsInTheirShortestFormAndNullForWhatIsMissing) {
  HistoryColumns<float> c;
  c.interval_s = 1;
  c.metrics = {MetricId::kPowerDrawW, MetricId::kMemoryUsedBytes};
  c.throttled = true;
  HistoryGpuColumns<float> g;
  g.gpu = 3;
  g.time = {1764450000.125, 1764450001.5};
  g.values = {{87.3F, std::numeric_limits<float>::quiet_NaN()},
              {8.5e10F, std::numeric_limits<float>::infinity()}};
  g.throttled = {1, -1};
  c.gpus.push_back(g);
  const std::string body = write_history_json(c);
  EXPECT_NE(body.find("[87.3,null]"), std::string::npos) << body;
  EXPECT_EQ(body.find("87.3000"), std::string::npos) << "a float prints as the float";
  const json h = json::parse(body);
  EXPECT_EQ(h["metrics"], json({"power_draw_w", "memory_used_bytes", "throttled"}));
  EXPECT_EQ(h["stride"], 1);
  ASSERT_EQ(h["gpus"].size(), 1U);
  EXPECT_EQ(h["gpus"][0]["gpu"], 3);
  EXPECT_EQ(h["gpus"][0]["time"], json({1764450000.125, 1764450001.5}));
  EXPECT_EQ(h["gpus"][0]["values"]["memory_used_bytes"], json({8.5e10, nullptr}));
  EXPECT_EQ(h["gpus"][0]["values"]["throttled"], json({1, nullptr}));
}

TEST(HistoryColumns, DoublesStayExactAndAnEmptyAnswerIsValid) {
  HistoryColumns<double> c;
  c.metrics = {MetricId::kEnergyJ};
  HistoryGpuColumns<double> g;
  g.time = {1.0};
  g.values = {{12345678901.25}};
  c.gpus.push_back(g);
  EXPECT_EQ(json::parse(write_history_json(c))["gpus"][0]["values"]["energy_j"][0], 12345678901.25);
  HistoryColumns<double> none;
  none.throttled = true;
  const json h = json::parse(write_history_json(none));
  EXPECT_EQ(h["metrics"], json({"throttled"}));
  EXPECT_EQ(h["gpus"], json::array());
}

TEST(HistoryColumns, StrideKeepsTheAnswerWithinItsBound) {
  EXPECT_EQ(history_stride(0, 100), 1U);
  EXPECT_EQ(history_stride(100, 100), 1U);
  EXPECT_EQ(history_stride(101, 100), 2U);
  EXPECT_EQ(history_stride(64 * 3600 * 13, 2'000'000), 2U);
  EXPECT_EQ(history_stride(5, 0), 1U);
}

TEST(HistoryColumns, ThrottledFlagIsTheOneRule) {
  EXPECT_EQ(throttled_flag(std::nullopt, 1500.0, 1980.0), -1);
  EXPECT_EQ(throttled_flag(static_cast<double>(kClockEventSwThermalSlowdown), 1500.0, 1980.0), 1);
  EXPECT_EQ(throttled_flag(static_cast<double>(kClockEventSwPowerCap), 1900.0, 1980.0), 0);
}

}  // namespace
}  // namespace gpumon::exporter
