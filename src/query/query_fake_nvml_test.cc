// SPDX-License-Identifier: MIT
// gpumon query end to end through the real loader and NvmlBackend, against gpumon's fake NVML
// library (build/fake-nvml/libnvidia-ml.so.1) playing the shipped scenarios.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <sstream>

#include "query/query_command.h"

namespace gpumon::query {
namespace {

const std::string kFakeLibrary = GPUMON_QUERY_FAKE_NVML;
const std::string kScenarios = std::string(GPUMON_SOURCE_DIR) + "/testdata/scenarios/";

// Sets environment variables for one test and restores them after.
class ScopedEnv {
 public:
  ~ScopedEnv() {
    for (const auto& [name, old] : saved_) {
      if (old)
        setenv(name.c_str(), old->c_str(), 1);
      else
        unsetenv(name.c_str());
    }
  }
  void set(const std::string& name, const std::string& value) {
    if (saved_.count(name) == 0) {
      const char* old = std::getenv(name.c_str());
      saved_[name] = old != nullptr ? std::optional<std::string>(old) : std::nullopt;
    }
    setenv(name.c_str(), value.c_str(), 1);
  }

 private:
  std::map<std::string, std::optional<std::string>> saved_;
};

struct Result {
  int rc;
  std::string out;
  std::string err;
};

class FakeNvml : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(kFakeLibrary)) GTEST_SKIP() << "not built: " << kFakeLibrary;
    env_.set("GPUMON_NVML_LIBRARY", kFakeLibrary);
    env_.set("GPUMON_FAKE_TIME_OFFSET_S", "0");
    env_.set("GPUMON_FAKE_TIME_SCALE", "1");
  }
  void play(const std::string& scenario) {
    env_.set("GPUMON_FAKE_SCENARIO", kScenarios + scenario + ".json");
  }
  Result query(const std::vector<std::string>& args) {
    std::ostringstream out, err;
    const int rc = run_query_command(args, out, err);
    return {rc, out.str(), err.str()};
  }
  ScopedEnv env_;
};

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

TEST_F(FakeNvml, IdleH200LooksLikeTheCapture) {
  play("idle-h200");
  const Result r =
      query({"--query-gpu=index,name,pci.bus_id,driver_version,pstate,fan.speed,"
             "memory.total,memory.used,memory.reserved,power.limit,clocks.sm,"
             "clocks_event_reasons.active,clocks_event_reasons.gpu_idle,count",
             "--format=csv"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.err, "gpumon: simulated GPUs (scenario idle-h200)\n");  // stderr, never in the CSV
  const auto out = lines(r.out);
  ASSERT_EQ(out.size(), 2U);
  EXPECT_EQ(out[0],
            "index, name, pci.bus_id, driver_version, pstate, fan.speed [%], memory.total [MiB], "
            "memory.used [MiB], memory.reserved [MiB], power.limit [W], clocks.current.sm [MHz], "
            "clocks_event_reasons.active, clocks_event_reasons.gpu_idle, count");
  EXPECT_EQ(out[1],
            "0, NVIDIA H200, 00000000:18:00.0, 580.159.04, P0, [N/A], 143771 MiB, 0 MiB, 459 MiB, "
            "700.00 W, 345 MHz, 0x0000000000000001, Active, 1");
}

TEST_F(FakeNvml, JsonIsFlaggedSimulated) {
  play("idle-h200");
  const Result r = query({"--query-gpu=uuid,memory.total", "--format=jsonl", "-i", "18:00.0"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("\"simulated\":\"idle-h200\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"uuid\":\"GPU-0c3a9e71-42d8-4f16-b5e2-7a19c0d4e8f3\","
                       "\"memory.total\":150754820096"),
            std::string::npos)
      << r.out;
}

TEST_F(FakeNvml, OnlyTheNeededNvmlCallsAreMade) {
  play("idle-h200");
  void* lib = dlopen(kFakeLibrary.c_str(), RTLD_NOW | RTLD_LOCAL);  // keeps one instance loaded
  ASSERT_NE(lib, nullptr);
  auto count =
      reinterpret_cast<unsigned long long (*)(const char*)>(dlsym(lib, "gpumonFakeCallCount"));
  auto reset = reinterpret_cast<void (*)()>(dlsym(lib, "gpumonFakeResetCounts"));
  ASSERT_TRUE(count != nullptr && reset != nullptr);
  reset();
  ASSERT_EQ(query({"--query-gpu=index,name,memory.total"}).rc, 0);
  EXPECT_EQ(count("nvmlDeviceGetPowerUsage"), 0U);
  EXPECT_EQ(count("nvmlDeviceGetUtilizationRates"), 0U);
  EXPECT_EQ(count("nvmlDeviceGetTotalEnergyConsumption"), 0U);
  reset();
  ASSERT_EQ(query({"--query-gpu=power.draw", "-lms", "1", "-c", "3"}).rc, 0);
  EXPECT_EQ(count("nvmlDeviceGetPowerUsage"), 3U);
  EXPECT_EQ(count("nvmlDeviceGetTotalEnergyConsumption"), 0U);
  dlclose(lib);
}

TEST_F(FakeNvml, LostGpuRowsWhileTheOtherContinues) {
  play("gpu-lost");  // GPU 1 answers GPU_IS_LOST from scenario time 5.0 s on
  env_.set("GPUMON_FAKE_TIME_OFFSET_S", "4.7");
  const Result r = query({"--query-gpu=index,utilization.gpu,power.draw", "--format=csv,noheader",
                          "-lms", "300", "-c", "3"});
  ASSERT_EQ(r.rc, 0) << r.err;
  const auto out = lines(r.out);
  ASSERT_EQ(out.size(), 6U) << r.out;
  EXPECT_EQ(out[1].find("[GPU is lost]"), std::string::npos) << out[1];  // at about 4.7 s
  EXPECT_EQ(out[5], "1, [GPU is lost], [GPU is lost]");                  // at about 5.3 s
  EXPECT_EQ(out[4].rfind("0, ", 0), 0U);
  EXPECT_EQ(out[4].find("[GPU is lost]"), std::string::npos);
}

TEST_F(FakeNvml, ComputeApps) {
  play("gpu-lost");
  const Result r = query({"--query-compute-apps=pid,process_name,gpu_bus_id,used_memory",
                          "--format=csv,noheader,nounits"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out,
            // 96100000000 bytes = 91648.4 MiB, shown rounded down
            "31000, python3, 00000000:18:00.0, 91648\n"
            "31001, python3, 00000000:2A:00.0, 91648\n");
}

TEST_F(FakeNvml, NoDriverIsOneActionableLine) {
  env_.set("GPUMON_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1");
  Result r = query({"--query-gpu=index"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.err.rfind("gpumon: cannot load NVML", 0), 0U) << r.err;
  EXPECT_NE(r.err.find("GPUMON_NVML_LIBRARY"), std::string::npos);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1);
  EXPECT_EQ(r.out, "");

  env_.set("GPUMON_NVML_LIBRARY", kFakeLibrary);
  play("init-no-driver");
  r = query({"--query-gpu=index"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.err.rfind("gpumon: NVML initialisation failed", 0), 0U) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1);
}

}  // namespace
}  // namespace gpumon::query
