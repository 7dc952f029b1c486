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

// A WatchSource on a fake scenario at `time_s`, sampling every 0.05 s, and the /proc reader
// its frames use (testdata/proc).
struct Fixture {
  Fixture(const char* scenario, double time_s) : env(scenario, time_s) {
    source = WatchSource::open(0.05, console);
  }
  fake::testing::FakeScenario env;
  std::ostringstream out, err;
  const Console console{out, err, -1, -1, nullptr, ""};
  std::unique_ptr<WatchSource> source;
  host::DiskProcFiles files{std::string(GPUMON_TESTDATA_DIR) + "/proc"};
  host::UserNames users{[](unsigned) { return std::optional<std::string>(); }};
  host::ProcessInspector inspector{files, users, host::InspectorOptions{100, 4096, 4096, true}};
};

// gpu-lost: GPU 1 raises XID 79 at 4.9 s and answers GPU_IS_LOST from 5 s on. The frame that
// shows it lost still carries the XID the sampler's event watcher saw, for its row to say why.
TEST(WatchSource, LostGpuKeepsTheXidItRaised) {
  Fixture f("gpu-lost", 4.5);
  ASSERT_NE(f.source, nullptr) << f.err.str();
  std::optional<Snapshot> snap;
  EXPECT_TRUE(testing_util::eventually([&] {
    snap = f.source->latest(f.inspector, "node", std::chrono::milliseconds(100));
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
  Fixture f("demo", 1.0);
  ASSERT_NE(f.source, nullptr) << f.err.str();
  std::set<std::int64_t> frames;  // distinct tick times seen
  while (frames.size() < 30) {
    const std::optional<Snapshot> snap =
        f.source->latest(f.inspector, "node", std::chrono::seconds(30));
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
