// SPDX-License-Identifier: MIT
// Hostile inputs for the scenario parser: each must give an error (never a crash, a hang or an
// exception), and what the fuzzer found stays here as a regression. Runs under the sanitizers.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "fake_nvml/scenario_parser.h"

namespace gpumon::fake {
namespace {

std::string repeat(std::string_view s, int n) {
  std::string out;
  out.reserve(s.size() * static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

std::vector<std::string> hostile_inputs() {
  const std::string good =
      R"({"devices": [{"fields": {"power_draw_mw": {"ramp": {"from": 1, "to": 2, "duration_s": 3}}}}]})";
  std::vector<std::string> in = {
      "",
      " ",
      "null",
      "[]",
      "\"devices\"",
      "{",
      "{\"devices\": [",
      "{\"devices\": [{}], }",
      "\xff\xfe{}",
      std::string("{\"devices\": [{\"name\": \"a\0b\"}]}", 30),
      R"({"devices": [{"name": "a\u0000b"}]})",
      R"({"devices": [{"memory_total_bytes": 1e400}]})",
      R"({"devices": [{"memory_total_bytes": -1}]})",
      R"({"devices": [{"memory_total_bytes": 18446744073709551616}]})",
      R"({"devices": [{"memory_total_bytes": 1.5}]})",
      R"({"devices": [{"fields": {"power_draw_mw": NaN}}]})",
      R"({"devices": [{"fields": {"power_draw_mw": "NaN"}}]})",
      R"({"devices": [{"fields": {"power_draw_mw": "Infinity"}}]})",
      R"({"devices": [{"fields": {"power_draw_mw": -1e309}}]})",
      R"({"devices": [{"fields": {"power_draw_mw": {"periodic": {"min": 0, "max": 1, "period_s": 1e-320}}}}]})",
      R"({"devices": [{"fields": {"power_draw_mw": {"points": {"values": []}}}}]})",
      R"({"devices": [{"fields": {"power_draw_mw": {"points": {"values": [[1]]}}}}]})",
      R"({"devices": [{"fields": {"power_draw_mw": {"points": {"values": [[-1, 2]]}}}}]})",
      R"({"devices": [{"fields": {"power_draw_mw": {"points": {"values": [[0, 1]], "repeat_s": 0}}}}]})",
      R"({"devices": [{"fields": {"power_draw_mw": {"constant": 1, "ramp": {}}}}]})",
      R"({"devices": [{"fields": {"power_draw_mw": {}}}]})",
      R"({"devices": [{"fields": {"power_draw_mw": {"clamp": [2, 1], "constant": 1}}}]})",
      R"({"devices": [{"fields": {"name": 1}}]})",
      R"({"devices": [{"processes": [{"pid": "{index}{index}{index}{index}{index}{index}{index}{index}{index}{index}{index}", "name": "x"}]}]})",
      R"({"devices": [{"processes": [{"pid": 0, "name": "x"}]}]})",
      R"({"devices": [{"processes": [{"pid": "-5", "name": "x"}]}]})",
      R"({"devices": [{"uuid": "{index:9999x}"}]})",
      R"({"devices": [{"uuid": "{index:}"}]})",
      R"({"devices": [{"uuid": "{"}]})",
      R"({"devices": [{"pci_bus_id": "+0000000:18:00.0"}]})",
      R"({"devices": [{"pci_bus_id": "00000000:18:00.0x"}]})",
      R"({"devices": [{"xid_events": [{"at_s": 1}]}]})",
      R"({"devices": [{"latency_us": {"nvmlInit": 1e12}}]})",
      R"({"devices": [{"latency_us": []}]})",
      R"({"devices": [7]})",
      R"({"device_template": 7, "repeat_devices": 1})",
      R"({"device_template": {}, "repeat_devices": 1, "devices": [{}, {}]})",
      R"({"repeat_devices": 3})",
      R"({"devices": [], "init": {"error": "SUCCESSFUL"}})",
      R"({"seed": -1, "devices": []})",
      repeat("[", 10000) + repeat("]", 10000),
      repeat("{\"a\":", 10000) + "1" + repeat("}", 10000),
      "{\"devices\": [" + repeat("{}, ", 1100) + "{}]}",
      "{\"devices\": [{\"name\": \"" + std::string(100000, 'x') + "\"}]}",
      "{\"devices\": [{\"" + std::string(100000, 'k') + "\": 1}]}",
      "{\"devices\": [{\"fields\": {\"power_draw_mw\": 1" + repeat("0", 400) + "}}]}",
  };
  // Per-device limits times 1024 templated devices would be gigabytes: the totals stop them.
  std::string procs;
  for (int i = 0; i < 4000; ++i) procs += std::string(i ? "," : "") + R"({"pid": 1, "name": "x"})";
  in.push_back(R"({"device_template": {"processes": [)" + procs + R"(]}, "repeat_devices": 1024})");
  std::string events;
  for (int i = 0; i < 50000; ++i) events += std::string(i ? "," : "") + R"({"at_s": 1, "xid": 2})";
  in.push_back(R"({"device_template": {"xid_events": [)" + events +
               R"(]}, "repeat_devices": 1024})");
  for (std::size_t cut = 1; cut < good.size(); cut += 7) in.push_back(good.substr(0, cut));
  return in;
}

TEST(ScenarioHostile, EveryHostileInputIsAClearError) {
  for (const std::string& input : hostile_inputs()) {
    const ParseResult r = parse_scenario(input, "hostile");
    EXPECT_FALSE(r.scenario.has_value()) << "accepted: " << input.substr(0, 200);
    EXPECT_FALSE(r.error.empty());
    EXPECT_LT(r.error.size(), 1000U) << "error too long for input " << input.substr(0, 100);
  }
}

// Inputs kept from fuzzing (testdata/fuzz/scenario): none may crash; valid ones may parse.
TEST(ScenarioHostile, FuzzCorpusDoesNotCrash) {
  const std::filesystem::path dir = GPUMON_TEST_FUZZ_CORPUS_DIR;
  int seen = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    const ParseResult r = parse_scenario(text.str(), "corpus");
    EXPECT_NE(r.scenario.has_value(), !r.error.empty()) << entry.path();
    ++seen;
  }
  EXPECT_GT(seen, 0);
}

}  // namespace
}  // namespace gpumon::fake
