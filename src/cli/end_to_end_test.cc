// SPDX-License-Identifier: MIT
// The gpumon executable end to end, through the real NVML loading path with gpumon's fake
// library (build/fake-nvml/libnvidia-ml.so.1) playing scenarios from testdata/.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>

namespace gpumon::cli {
namespace {

struct Result {
  int rc = -1;
  std::string out;
  std::string err;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

class EndToEndTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::access(GPUMON_FAKE_NVML, R_OK) != 0) {
      FAIL() << "the fake NVML library is missing: build the gpumon_fake_nvml target ("
             << GPUMON_FAKE_NVML << ")";
    }
    char tmpl[] = "/tmp/gpumon-e2e-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    if (!dir_.empty()) std::system(("rm -rf '" + dir_ + "'").c_str());
  }

  // Runs gpumon with `args` (shell words) and the fake library playing `scenario`.
  Result run(const std::string& scenario, const std::string& args,
             const std::string& library = GPUMON_FAKE_NVML) const {
    const std::string cmd = "env GPUMON_NVML_LIBRARY='" + library + "' GPUMON_FAKE_SCENARIO='" +
                            scenario + "' GPUMON_SCENARIO_DIR='" GPUMON_SCENARIO_DIR "' '" +
                            GPUMON_BINARY "' " + args + " >'" + dir_ + "/out' 2>'" + dir_ +
                            "/err' </dev/null";
    const int status = std::system(cmd.c_str());
    Result r;
    r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = slurp(dir_ + "/out");
    r.err = slurp(dir_ + "/err");
    return r;
  }

  static int count_matches(const std::string& text, const std::string& pattern) {
    const std::regex re(pattern, std::regex::multiline);
    return static_cast<int>(
        std::distance(std::sregex_iterator(text.begin(), text.end(), re), std::sregex_iterator()));
  }

  std::string dir_;
};

TEST_F(EndToEndTest, DemoSnapshotShowsEightSimulatedGpus) {
  const Result r = run("demo", "");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out.rfind("SIMULATED GPUs \xE2\x80\x94 scenario \"demo\" (gpumon fake NVML; not real "
                        "hardware)\n",
                        0),
            0U)
      << r.out;
  EXPECT_EQ(count_matches(r.out, "^  [0-7]  NVIDIA H200 "), 8) << r.out;
  EXPECT_EQ(count_matches(r.out, "throttle: "), 8);
  EXPECT_NE(r.out.find("\nProcesses\n"), std::string::npos);
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos);  // not a terminal: no colour
  EXPECT_EQ(r.out.find("GPU-"), std::string::npos);  // no UUIDs by default
  EXPECT_EQ(r.err, "");
}

TEST_F(EndToEndTest, DemoJson) {
  const Result r = run("demo", "--json --show-uuid");
  ASSERT_EQ(r.rc, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["simulated"], "demo");
  ASSERT_EQ(j["gpus"].size(), 8U);
  for (const auto& g : j["gpus"]) {
    EXPECT_EQ(g["name"], "NVIDIA H200");
    EXPECT_TRUE(g["memory_total_bytes"].is_number_unsigned());
    EXPECT_EQ(g["uuid"].get<std::string>().rfind("GPU-", 0), 0U);
  }
  EXPECT_FALSE(j["processes"].empty());
}

TEST_F(EndToEndTest, LostGpuInItsRow) {
  const Result r = run(GPUMON_TESTDATA_DIR "/cli/lost-at-start.json", "");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(count_matches(r.out, "^  1 +GPU LOST "), 1) << r.out;
  EXPECT_EQ(count_matches(r.out, "^  0  NVIDIA H200 "), 1) << r.out;
  EXPECT_NE(r.out.find("\nNo running GPU processes.\n"), std::string::npos);
}

TEST_F(EndToEndTest, AGpuThatCannotBeOpenedSaysWhyAndIsNotLost) {
  const Result r = run(GPUMON_TESTDATA_DIR "/cli/no-permission-at-open.json", "");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(count_matches(r.out, "^  1 +CANNOT OPEN +\\(Insufficient Permissions\\)$"), 1) << r.out;
  EXPECT_EQ(count_matches(r.out, "^  0  NVIDIA H200 "), 1) << r.out;
  EXPECT_EQ(r.out.find("LOST"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("gpu_lost"), std::string::npos) << r.out;
  const Result j = run(GPUMON_TESTDATA_DIR "/cli/no-permission-at-open.json", "--json");
  ASSERT_EQ(j.rc, 0) << j.err;
  const nlohmann::json gpus = nlohmann::json::parse(j.out)["gpus"];
  ASSERT_EQ(gpus.size(), 2U);
  EXPECT_EQ(gpus[1]["lost"], false);
}

TEST_F(EndToEndTest, NoLibraryMeansNoDriver) {
  const Result r = run("demo", "", "/nonexistent/libnvidia-ml.so.1");
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.rfind("gpumon: no NVIDIA driver found (", 0), 0U) << r.err;
  // The fake library sits beside the binary in a build tree: the hint names it.
  EXPECT_NE(r.err.find("GPUMON_NVML_LIBRARY=" GPUMON_FAKE_NVML " GPUMON_FAKE_SCENARIO=demo"),
            std::string::npos)
      << r.err;
}

TEST_F(EndToEndTest, DriverNotLoaded) {
  const Result r = run("init-no-driver", "");
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err.rfind("gpumon: no NVIDIA driver found (NVML initialisation failed", 0), 0U)
      << r.err;
}

TEST_F(EndToEndTest, WatchWithoutATerminalPrintsPlainSnapshots) {
  const Result r = run("demo", "watch --interval 0.1 --count 3");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(count_matches(r.out, "^SIMULATED GPUs"), 3);
  EXPECT_EQ(count_matches(r.out, "^  7  NVIDIA H200 "), 3);
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos);  // no escape codes into a pipe
}

TEST_F(EndToEndTest, QueryIsDispatched) {
  const Result r = run("demo", "query --query-gpu=index,name --format=csv,noheader");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(count_matches(r.out, "^[0-7], NVIDIA H200$"), 8) << r.out;
}

TEST_F(EndToEndTest, UnknownCommandExitsTwo) {
  const Result r = run("demo", "frobnicate");
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("unknown command 'frobnicate'"), std::string::npos);
}

TEST_F(EndToEndTest, Version) {
  const Result r = run("demo", "--version");
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(r.out.rfind("gpumon 0.", 0), 0U);
}

}  // namespace
}  // namespace gpumon::cli
