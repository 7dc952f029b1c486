// SPDX-License-Identifier: MIT
// FakeRun: a Sampler over a FakeBackend and a FakeClock, run for a span of fake time at full
// speed. Test-only; header-only.
#pragma once

#include <memory>

#include "sampler/sampler.h"
#include "sampler/testing/fake_backend.h"
#include "sampler/testing/recording_sink.h"

namespace gpumon::testing {

struct FakeRun {
  std::shared_ptr<FakeClock> clock = std::make_shared<FakeClock>();
  MonoClock::time_point t0 = clock->now();
  std::shared_ptr<RecordingSink> sink = std::make_shared<RecordingSink>();
  FakeBackend* backend = nullptr;  // owned by the sampler
  std::unique_ptr<Sampler> sampler;

  /// `config` with host details off (the fake PIDs are not on this host).
  FakeRun(unsigned gpus, SamplerConfig config) {
    auto owned = std::make_unique<FakeBackend>(gpus, clock);
    backend = owned.get();
    config.host_process_details = false;
    sampler = std::make_unique<Sampler>(std::move(owned), config, clock);
    sampler->add_sink(sink);
  }

  /// Runs until the schedule reaches t0 + `span`, then stops the sampler.
  void run_for(MonoClock::duration span) {
    clock->set_end(t0 + span);
    sampler->start();
    clock->wait_until_parked();
    sampler->stop();
  }

  /// Calls for `gpu` that asked for `group`.
  std::vector<MonoClock::time_point> calls(unsigned gpu, MetricGroup group) const {
    std::vector<MonoClock::time_point> at;
    for (const auto& c : backend->calls()) {
      if (c.gpu == gpu && !c.processes && (MetricSet(group).bits() & c.what) != 0) {
        at.push_back(c.at);
      }
    }
    return at;
  }
  std::vector<MonoClock::time_point> process_calls(unsigned gpu) const {
    std::vector<MonoClock::time_point> at;
    for (const auto& c : backend->calls()) {
      if (c.gpu == gpu && c.processes) at.push_back(c.at);
    }
    return at;
  }
};

}  // namespace gpumon::testing
