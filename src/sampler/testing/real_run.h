// SPDX-License-Identifier: MIT
// RealRun: a Sampler over the real loader and gpumon's fake NVML library (the scenario chosen
// by a fake::testing::FakeScenario in scope), running in real time from construction until
// stop(): a test waits for what it needs (until()), never for a guessed span. Test-only.
#pragma once

#include <chrono>
#include <functional>
#include <memory>

#include "gpu/testing/open_fake_backend.h"
#include "sampler/sampler.h"
#include "sampler/testing/recording_sink.h"
#include "util/testing/eventually.h"

namespace gpumon::testing {

struct RealRun {
  std::shared_ptr<RecordingSink> sink = std::make_shared<RecordingSink>();
  std::unique_ptr<Sampler> sampler;  ///< null when the fake library could not be opened

  explicit RealRun(SamplerConfig config) {
    std::unique_ptr<GpuBackend> backend = open_fake_backend();
    if (!backend) return;
    sampler = std::make_unique<Sampler>(std::move(backend), config);
    sampler->add_sink(sink);
    sampler->start();
  }
  explicit RealRun(std::chrono::milliseconds interval) : RealRun(with_interval(interval)) {}

  /// Waits until `done` holds (testing_util::eventually); false when it never did.
  static bool until(const std::function<bool()>& done) { return testing_util::eventually(done); }
  /// Ticks published so far.
  std::uint64_t ticks() const { return sampler->stats().ticks; }
  void stop() { sampler->stop(); }

  static SamplerConfig with_interval(std::chrono::milliseconds interval) {
    SamplerConfig c;
    c.interval = interval;
    return c;
  }
};

}  // namespace gpumon::testing
