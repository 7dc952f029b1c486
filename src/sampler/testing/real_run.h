// SPDX-License-Identifier: MIT
// RealRun: a Sampler over the real loader and gpumon's fake NVML library (the scenario chosen
// by a fake::testing::FakeScenario in scope), run in real time for a while. Test-only.
#pragma once

#include <chrono>
#include <memory>
#include <thread>

#include "gpu/testing/open_fake_backend.h"
#include "sampler/sampler.h"
#include "sampler/testing/recording_sink.h"

namespace gpumon::testing {

struct RealRun {
  std::shared_ptr<RecordingSink> sink = std::make_shared<RecordingSink>();
  std::unique_ptr<Sampler> sampler;  ///< null when the fake library could not be opened

  RealRun(SamplerConfig config, std::chrono::milliseconds span) {
    std::unique_ptr<GpuBackend> backend = open_fake_backend();
    if (!backend) return;
    sampler = std::make_unique<Sampler>(std::move(backend), config);
    sampler->add_sink(sink);
    sampler->start();
    std::this_thread::sleep_for(span);
    sampler->stop();
  }
  RealRun(std::chrono::milliseconds interval, std::chrono::milliseconds span)
      : RealRun(with_interval(interval), span) {}

  static SamplerConfig with_interval(std::chrono::milliseconds interval) {
    SamplerConfig c;
    c.interval = interval;
    return c;
  }
};

}  // namespace gpumon::testing
