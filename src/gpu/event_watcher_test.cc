// SPDX-License-Identifier: MIT
// EventWatcher over the fake libnvidia-ml.so.1: scenario XIDs and ECC events arrive once each,
// unsupported registrations are tolerated, a lost GPU is left out, an UNKNOWN wait rebuilds
// the set, and stop() ends the wait in progress without another. Where the order of events
// matters, scenario time stands still and the test moves it.
#include "gpu/event_watcher.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>
#include <tuple>
#include <utility>

#include "fake_nvml/fake_test_env.h"
#include "gpu/nvml_backend.h"
#include "gpu/testing/open_fake_backend.h"

namespace gpumon {
namespace {

using fake::testing::FakeScenario;
using fake::testing::Hooks;
using fake::testing::kFakeLibrary;
using fake::testing::kTimeStandsStill;
using fake::testing::TempScenario;
using std::chrono::milliseconds;
using Kind = GpuEvent::Kind;

std::unique_ptr<NvmlBackend> open_backend() {
  return testing::open_fake_backend();
}

// Collects events from the watcher's thread.
class Collector {
 public:
  EventWatcher::Callback callback() {
    return [this](const GpuEvent& e) {
      std::lock_guard<std::mutex> lock(mutex_);
      events_.push_back(e);
      arrived_.notify_all();
    };
  }
  /// Waits until `n` events arrived (the limit only ends a hung test); returns them all.
  std::vector<GpuEvent> wait_for(std::size_t n, milliseconds limit = milliseconds(60000)) {
    std::unique_lock<std::mutex> lock(mutex_);
    arrived_.wait_for(lock, limit, [&] { return events_.size() >= n; });
    return events_;
  }
  /// (gpu, kind, value) of each event, in arrival order.
  static std::vector<std::tuple<unsigned, Kind, std::uint64_t>> keys(
      const std::vector<GpuEvent>& events) {
    std::vector<std::tuple<unsigned, Kind, std::uint64_t>> out;
    for (const auto& e : events) out.emplace_back(e.gpu, e.kind, e.value);
    return out;
  }

 private:
  std::mutex mutex_;
  std::condition_variable arrived_;
  std::vector<GpuEvent> events_;
};

EventWatcher::Options fast() {
  EventWatcher::Options o;
  o.wait_timeout = milliseconds(40);
  o.error_backoff = milliseconds(10);
  return o;
}

TEST(EventWatcher, DeliversScenarioXidsOnceEachAndStopsPromptly) {
  FakeScenario env("xid", 11.9);  // 13 (3 s), 31 (6 s), 119 (12 s) on GPU 0; 94 (8 s) on GPU 1
  auto b = open_backend();
  ASSERT_TRUE(b);
  Collector got;
  EventWatcher w(b->library(), b->device_count(), got.callback(), fast());
  const auto before = std::chrono::system_clock::now();
  ASSERT_TRUE(w.start());
  auto events = got.wait_for(4);
  std::this_thread::sleep_for(milliseconds(150));  // nothing more may come
  events = got.wait_for(4);
  std::map<std::pair<unsigned, std::uint64_t>, int> seen;
  for (const auto& e : events) {
    EXPECT_EQ(e.kind, Kind::kXid);
    EXPECT_GE(e.wall_time, before);  // stamped on receipt
    ++seen[{e.gpu, e.value}];
  }
  EXPECT_EQ(seen, (std::map<std::pair<unsigned, std::uint64_t>, int>{
                      {{0, 13}, 1}, {{0, 31}, 1}, {{0, 119}, 1}, {{1, 94}, 1}}));
  EXPECT_EQ(w.registered(0), 0xBU);  // XID + both ECC kinds
  EXPECT_EQ(w.builds(), 1U);
  // stop() lets the wait in progress end and joins the thread: at most one more wait began
  // before the thread saw the stop, never a loop of them.
  const Hooks hooks = Hooks::get();
  const auto waits = [&] { return hooks.call_count("nvmlEventSetWait_v2"); };
  const auto waits_before = waits();
  w.stop();
  EXPECT_LE(waits(), waits_before + 1);
}

TEST(EventWatcher, EccEventsAndRegistrationsThatAreNotSupported) {
  TempScenario sc(R"({"devices": [
      {"ecc_events": [{"at_s": 0.05, "type": "single_bit"}, {"at_s": 0.1, "type": "double_bit"}]},
      {"ecc_enabled": false, "xid_events": [{"at_s": 0.1, "xid": 48}]},
      {"unsupported": ["events"], "xid_events": [{"at_s": 0.1, "xid": 31}]}]})");
  FakeScenario env(sc.path());
  auto b = open_backend();
  ASSERT_TRUE(b);
  const Hooks hooks = Hooks::get();
  hooks.reset_counts();
  Collector got;
  EventWatcher w(b->library(), b->device_count(), got.callback(), fast());
  ASSERT_TRUE(w.start());
  auto events = got.wait_for(3);
  std::this_thread::sleep_for(milliseconds(150));
  events = got.wait_for(3);
  std::sort(events.begin(), events.end(), [](const GpuEvent& a, const GpuEvent& c) {
    return std::pair(a.gpu, a.kind) < std::pair(c.gpu, c.kind);
  });
  EXPECT_EQ(Collector::keys(events),
            (std::vector<std::tuple<unsigned, Kind, std::uint64_t>>{
                {0, Kind::kEccSingleBit, 0}, {0, Kind::kEccDoubleBit, 0}, {1, Kind::kXid, 48}}));
  EXPECT_EQ(w.registered(0), 0xBU);
  EXPECT_EQ(w.registered(1), 0x8U);  // ECC disabled: XIDs only
  EXPECT_EQ(w.registered(2), 0U);    // refused everything: left out
  w.stop();
  // GPU 0 once, GPU 1 twice (all, then XID), GPU 2 twice; never again.
  EXPECT_EQ(hooks.call_count("nvmlDeviceRegisterEvents"), 5U);
}

TEST(EventWatcher, ALostGpuIsLeftOutAndTheOthersKeepReporting) {
  TempScenario sc(R"({"devices": [
      {"xid_events": [{"at_s": 1.2, "xid": 13}]},
      {"xid_events": [{"at_s": 0.5, "xid": 79}], "lost_at_s": 0.8}]})");
  FakeScenario env(sc.path(), 0, kTimeStandsStill);
  auto b = open_backend();
  ASSERT_TRUE(b);
  const Hooks hooks = Hooks::get();
  Collector got;
  EventWatcher w(b->library(), b->device_count(), got.callback(), fast());
  ASSERT_TRUE(w.start());
  hooks.set_time(0.6);
  EXPECT_EQ(got.wait_for(1).size(), 1U);
  hooks.set_time(0.9);
  EXPECT_EQ(got.wait_for(2).size(), 2U);
  hooks.set_time(1.3);
  const auto events = got.wait_for(3);
  EXPECT_EQ(Collector::keys(events),
            (std::vector<std::tuple<unsigned, Kind, std::uint64_t>>{
                {1, Kind::kXid, 79}, {1, Kind::kLost, 0}, {0, Kind::kXid, 13}}));
  EXPECT_NE(w.registered(0), 0U);
  EXPECT_EQ(w.registered(1), 0U);
  EXPECT_GE(w.builds(), 2U);
  w.stop();
}

TEST(EventWatcher, ALostGpuThatRecoversIsRegisteredAgain) {
  TempScenario sc(R"({"devices": [{}, {"lost_at_s": 0.05, "recovers_at_s": 0.3,
                                      "xid_events": [{"at_s": 0.5, "xid": 63}]}]})");
  FakeScenario env(sc.path(), 0, kTimeStandsStill);
  auto b = open_backend();
  ASSERT_TRUE(b);
  const Hooks hooks = Hooks::get();
  Collector got;
  auto options = fast();
  options.lost_retry = milliseconds(50);
  EventWatcher w(b->library(), b->device_count(), got.callback(), options);
  ASSERT_TRUE(w.start());
  hooks.set_time(0.1);
  EXPECT_EQ(got.wait_for(1).size(), 1U);
  hooks.set_time(0.4);
  EXPECT_EQ(got.wait_for(2).size(), 2U);
  hooks.set_time(0.6);
  const auto events = got.wait_for(3);
  EXPECT_EQ(Collector::keys(events),
            (std::vector<std::tuple<unsigned, Kind, std::uint64_t>>{
                {1, Kind::kLost, 0}, {1, Kind::kRecovered, 0}, {1, Kind::kXid, 63}}));
  EXPECT_NE(w.registered(1), 0U);
  w.stop();
}

TEST(EventWatcher, AnUnknownWaitRebuildsTheSetWithoutRepeatingEvents) {
  TempScenario sc(R"({"devices": [{
      "xid_events": [{"at_s": 0.05, "xid": 13}, {"at_s": 0.1, "xid": 31}, {"at_s": 0.15, "xid": 43}],
      "errors": [{"call": "nvmlEventSetWait", "error": "UNKNOWN", "every_nth_call": 2}]}]})");
  FakeScenario env(sc.path());
  auto b = open_backend();
  ASSERT_TRUE(b);
  Collector got;
  EventWatcher w(b->library(), b->device_count(), got.callback(), fast());
  ASSERT_TRUE(w.start());
  got.wait_for(3);
  std::this_thread::sleep_for(milliseconds(150));
  EXPECT_EQ(Collector::keys(got.wait_for(3)),
            (std::vector<std::tuple<unsigned, Kind, std::uint64_t>>{
                {0, Kind::kXid, 13}, {0, Kind::kXid, 31}, {0, Kind::kXid, 43}}));
  EXPECT_GE(w.builds(), 2U);
  w.stop();
  w.stop();  // idempotent
}

}  // namespace
}  // namespace gpumon
