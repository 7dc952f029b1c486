// SPDX-License-Identifier: MIT
// WatchSource over the fake NVML: what the live view's frames carry beyond one reading.
#include "cli/watch_source.h"

#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <thread>

#include "fake_nvml/fake_test_env.h"
#include "host/proc_files.h"
#include "util/testing/eventually.h"

namespace gpumon::cli {
namespace {

// gpu-lost: GPU 1 raises XID 79 at 4.9 s and answers GPU_IS_LOST from 5 s on. The frame that
// shows it lost still carries the XID the sampler's event watcher saw, for its row to say why.
TEST(WatchSource, LostGpuKeepsTheXidItRaised) {
  fake::testing::FakeScenario env("gpu-lost", 4.5);
  std::ostringstream out, err;
  const Console console{out, err, -1, -1, nullptr, ""};
  auto source = WatchSource::open(0.05, console);
  ASSERT_NE(source, nullptr) << err.str();
  host::DiskProcFiles files(std::string(GPUMON_TESTDATA_DIR) + "/proc");
  host::UserNames users([](unsigned) { return std::optional<std::string>(); });
  host::ProcessInspector inspector(files, users, host::InspectorOptions{100, 4096, 4096, true});
  std::optional<Snapshot> snap;
  EXPECT_TRUE(testing_util::eventually([&] {
    snap = source->latest(inspector, "node", std::chrono::milliseconds(100));
    return snap && snap->gpus.size() == 2 && snap->gpus[1].sample.lost &&
           snap->gpus[1].last_xid.has_value();
  }));
  ASSERT_TRUE(snap && snap->gpus.size() == 2);
  EXPECT_EQ(snap->gpus[1].last_xid, 79U);
  EXPECT_EQ(snap->gpus[0].last_xid, std::nullopt);
  EXPECT_FALSE(snap->gpus[0].sample.lost);
}

// At 0.05 s the slow group (temperature, power limit: once a second) is in one tick of
// twenty; every frame still carries its last known reading instead of flickering to N/A.
TEST(WatchSource, FastFramesKeepTheSlowReadings) {
  fake::testing::FakeScenario env("demo", 1.0);
  std::ostringstream out, err;
  const Console console{out, err, -1, -1, nullptr, ""};
  auto source = WatchSource::open(0.05, console);
  ASSERT_NE(source, nullptr) << err.str();
  host::DiskProcFiles files(std::string(GPUMON_TESTDATA_DIR) + "/proc");
  host::UserNames users([](unsigned) { return std::optional<std::string>(); });
  host::ProcessInspector inspector(files, users, host::InspectorOptions{100, 4096, 4096, true});
  std::set<std::int64_t> frames;  // distinct tick times seen
  while (frames.size() < 30) {
    const std::optional<Snapshot> snap =
        source->latest(inspector, "node", std::chrono::seconds(30));
    ASSERT_TRUE(snap && !snap->gpus.empty());
    const DeviceSample& s = snap->gpus[0].sample;
    if (!frames.insert(snap->taken_at.time_since_epoch().count()).second) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      continue;
    }
    EXPECT_TRUE(s.temperature_gpu_c) << "frame " << frames.size();
    EXPECT_TRUE(s.power_limit_w) << "frame " << frames.size();
  }
}

}  // namespace
}  // namespace gpumon::cli
