// SPDX-License-Identifier: MIT
#include "node/node_log.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

namespace gpumon::node {
namespace {

constexpr std::int64_t kNowMs = 1764707619123;  // 2025-12-02T20:33:39.123Z

std::vector<nlohmann::json> json_lines(const std::string& text) {
  std::vector<nlohmann::json> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
  return out;
}

diagnose::Finding stall() {
  diagnose::Finding f;
  f.id = "data_loader_stall";
  f.severity = diagnose::Severity::kWarning;
  f.title = "Data loader stall";
  f.summary = "40% of step time waiting for data";
  f.advice = "raise num_workers";
  f.gpus = {0};
  f.ranks = {0};
  return f;
}

TEST(NodeLog, TextIsAsAlways) {
  std::ostringstream out;
  const NodeLog log(out, "agent", LogFormat::kText, [] { return kNowMs; });
  log.say("listening", "listening on /run/a.sock");
  log.say("no_agent_socket", "no agent socket (busy)", NodeLog::Level::kWarning);
  log.finding(stall(), "appeared");
  log.finding(stall(), "cleared");
  EXPECT_EQ(out.str(),
            "gpumon agent: listening on /run/a.sock\n"
            "gpumon agent: warning: no agent socket (busy)\n"
            "gpumon agent: 2025-12-02T20:33:39.123Z warning data_loader_stall gpu 0 rank 0: 40% "
            "of step time waiting for data\n"
            "gpumon agent: 2025-12-02T20:33:39.123Z cleared data_loader_stall gpu 0 rank 0: 40% "
            "of step time waiting for data\n");
}

// One object per line with stable keys, for a log collector.
TEST(NodeLog, JsonIsOneObjectPerLineWithStableKeys) {
  std::ostringstream out;
  const NodeLog log(out, "serve", LogFormat::kJson, [] { return kNowMs; });
  log.say("listening", "listening on 127.0.0.1:9477");
  log.say("recording_stopped", "recording stopped: disk full", NodeLog::Level::kError);
  log.finding(stall(), "appeared");
  log.finding(stall(), "cleared");
  const auto lines = json_lines(out.str());
  ASSERT_EQ(lines.size(), 4U);
  EXPECT_EQ(lines[0], (nlohmann::json{{"time", "2025-12-02T20:33:39.123Z"},
                                      {"command", "serve"},
                                      {"level", "info"},
                                      {"event", "listening"},
                                      {"message", "listening on 127.0.0.1:9477"}}));
  EXPECT_EQ(lines[1]["level"], "error");
  EXPECT_EQ(lines[1]["message"], "recording stopped: disk full") << "no 'warning: ' in JSON";
  EXPECT_EQ(lines[2]["event"], "finding");
  EXPECT_EQ(lines[2]["state"], "appeared");
  EXPECT_EQ(lines[2]["level"], "warning");
  EXPECT_EQ(lines[2]["id"], "data_loader_stall");
  EXPECT_EQ(lines[2]["advice"], "raise num_workers");
  EXPECT_EQ(lines[2]["gpus"], nlohmann::json::array({0}));
  EXPECT_EQ(lines[3]["state"], "cleared");
  EXPECT_EQ(lines[3]["level"], "info");
}

TEST(NodeLog, ParsesItsFormats) {
  EXPECT_EQ(parse_log_format("text"), LogFormat::kText);
  EXPECT_EQ(parse_log_format("json"), LogFormat::kJson);
  EXPECT_FALSE(parse_log_format("JSON"));
  EXPECT_FALSE(parse_log_format(""));
}

}  // namespace
}  // namespace gpumon::node
