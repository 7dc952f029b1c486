// SPDX-License-Identifier: MIT
// The report's energy against power integrated over the run, on the fake NVML's demo scenario
// recorded as `gpumon record` does (the sampler with its default schedule: power every second,
// the energy counter every 10 s, staggered over the GPUs). Time is the sampler's fake clock,
// which the scenario follows, so the run is the same however loaded the machine is.
#include <gtest/gtest.h>

#include "fake_nvml/fake_test_env.h"
#include "gpu/testing/open_fake_backend.h"
#include "record/recording_writer.h"
#include "record/test_support.h"
#include "report/run_report.h"
#include "sampler/sampler.h"
#include "sampler/testing/fake_clock.h"
#include "sampler/testing/recording_sink.h"

namespace gpumon::report {
namespace {

using fake::testing::FakeScenario;
using fake::testing::Hooks;
using fake::testing::kTimeStandsStill;

// The sampler's fake clock, with the scenario's time set to follow it after every sleep.
class ScenarioClock final : public Clock {
 public:
  ScenarioClock() {
    if (hooks_.set_time) hooks_.set_time(0);
  }
  MonoClock::time_point now() override { return clock_.now(); }
  WallClock::time_point wall_now() override { return clock_.wall_now(); }
  bool sleep_until(MonoClock::time_point deadline, StopSignal& stop) override {
    const bool stopped = clock_.sleep_until(deadline, stop);
    hooks_.set_time(std::chrono::duration<double>(clock_.now() - t0_).count());
    return stopped;
  }
  bool wait_for_readers(MonoClock::time_point deadline, StopSignal& done) override {
    return clock_.wait_for_readers(deadline, done);  // the fake clock's: no deadline
  }
  gpumon::testing::FakeClock& fake() { return clock_; }
  MonoClock::time_point t0() const { return t0_; }
  bool hooked() const { return hooks_.set_time != nullptr; }

 private:
  gpumon::testing::FakeClock clock_;
  MonoClock::time_point t0_ = clock_.now();
  Hooks hooks_ = Hooks::get();
};

// The backend stamps each sample with the system clock; the recording gets the tick's (fake)
// time instead, as the samples were taken on the fake clock.
class AtTickTime final : public SampleSink {
 public:
  explicit AtTickTime(std::shared_ptr<SampleSink> next) : next_(std::move(next)) {}
  void on_tick(const TickSample& tick) override {
    TickSample t = tick;
    for (DeviceSample& s : t.gpus) s.wall_time = t.wall_time;
    next_->on_tick(t);
  }
  void on_event(const GpuEvent& e) override { next_->on_event(e); }
  void on_processes(const ProcessSnapshot& p) override { next_->on_processes(p); }

 private:
  std::shared_ptr<SampleSink> next_;
};

// Records `span` of the demo scenario; the ticks the sampler published.
std::vector<TickSample> record_demo(const std::string& path, std::chrono::seconds span) {
  auto clock = std::make_shared<ScenarioClock>();
  EXPECT_TRUE(clock->hooked());
  auto backend = gpumon::testing::open_fake_backend();
  if (!backend) return {};
  SamplerConfig config;  // gpumon record's: 1 s, energy every 10 s
  config.host_process_details = false;
  Sampler sampler(std::move(backend), config, clock);
  record::RecordingOptions options;
  options.path = path;
  std::string error;
  std::shared_ptr<record::RecordingWriter> writer = record::RecordingWriter::create(
      options, record::testing::test_run_info(), sampler.devices(), error);
  EXPECT_NE(writer, nullptr) << error;
  if (!writer) return {};
  auto ticks = std::make_shared<gpumon::testing::RecordingSink>();
  sampler.add_sink(std::make_shared<AtTickTime>(writer));
  sampler.add_sink(ticks);
  clock->fake().set_end(clock->t0() + span);
  sampler.start();
  clock->fake().wait_until_parked();
  sampler.stop();  // as the node pipeline does: the sampler, then the recording
  writer->close();
  EXPECT_EQ(writer->status().error, "");
  return ticks->ticks();
}

// Power integrated over the ticks, each reading held until the next tick (as the report does).
double power_integral_j(const std::vector<TickSample>& ticks, unsigned gpu) {
  double j = 0;
  for (std::size_t i = 0; i + 1 < ticks.size(); ++i) {
    const double dt =
        std::chrono::duration<double>(ticks[i + 1].wall_time - ticks[i].wall_time).count();
    j += ticks[i].gpus[gpu].power_draw_w.value_or(0) * dt;
  }
  return j;
}

TEST(ReportEnergy, TheWholeRunWithinTwoPercentOfIntegratedPower) {
  FakeScenario env("demo", 0, kTimeStandsStill);
  for (const int seconds : {5, 15, 34}) {
    SCOPED_TRACE(seconds);
    record::testing::TempDir dir;
    const std::string path = dir.file("demo.gpumon");
    const auto ticks = record_demo(path, std::chrono::seconds(seconds));
    ASSERT_GE(ticks.size(), static_cast<std::size_t>(seconds));
    auto loaded = load_run_report(path);
    ASSERT_TRUE(std::holds_alternative<RunReport>(loaded)) << std::get<std::string>(loaded);
    const RunReport& run = std::get<RunReport>(loaded);
    ASSERT_EQ(run.gpus.size(), 8U);
    double integral = 0;
    for (const GpuReport& g : run.gpus) {
      const double want = power_integral_j(ticks, g.gpu);
      integral += want;
      ASSERT_TRUE(g.energy_j.has_value());
      EXPECT_TRUE(g.energy_from_counter) << g.gpu;
      EXPECT_NEAR(*g.energy_j, want, 0.02 * want) << "GPU " << g.gpu;
    }
    const RunTotals totals = run_totals(run);
    ASSERT_TRUE(totals.energy_j.has_value());
    EXPECT_NEAR(*totals.energy_j, integral, 0.02 * integral);
    // About 630 W per GPU.
    EXPECT_NEAR(integral, 8 * 630.0 * seconds, 8 * 40.0 * seconds);
  }
}

}  // namespace
}  // namespace gpumon::report
