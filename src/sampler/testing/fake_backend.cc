// SPDX-License-Identifier: MIT
#include "sampler/testing/fake_backend.h"

#include <stdexcept>
#include <string>

#include "gpu/metric_catalog.h"

namespace gpumon::testing {

FakeBackend::FakeBackend(unsigned gpus, std::shared_ptr<FakeClock> clock)
    : clock_(std::move(clock)) {
  system_.driver_version = std::string("580.0-fake");
  system_.simulated_scenario = "sampler-fake-backend";
  for (unsigned i = 0; i < gpus; ++i) {
    DeviceStatic d;
    d.index = i;
    d.name = std::string("Fake GPU");
    devices_.push_back(d);
  }
}

void FakeBackend::set_lost(unsigned gpu, MonoClock::time_point from, MonoClock::time_point to) {
  lost_.emplace(gpu, std::pair{from, to});
}

std::vector<FakeBackend::Call> FakeBackend::calls() const {
  std::lock_guard lock(mutex_);
  return calls_;
}

bool FakeBackend::lost_now(unsigned gpu, MonoClock::time_point now) const {
  auto [first, last] = lost_.equal_range(gpu);
  for (auto it = first; it != last; ++it) {
    if (now >= it->second.first && now < it->second.second) return true;
  }
  return false;
}

void FakeBackend::log(Call call) {
  std::lock_guard lock(mutex_);
  calls_.push_back(call);
}

DeviceSample FakeBackend::sample(unsigned index, MetricSet what) {
  const MonoClock::time_point now = clock_->now();
  log({index, what.bits(), false, now});
  for (const auto& [group, cost] : costs_) {
    if (what.has(group)) clock_->advance(cost);
  }
  if ((what.bits() & throws_.bits()) != 0) throw std::runtime_error("fake backend: throws");
  DeviceSample s;
  s.index = index;
  s.mono_time = now;
  if (lost_now(index, now)) {
    mark_lost(s);
    return s;
  }
  auto value_or_error = [&](MetricGroup g, auto value) {
    using R = Reading<decltype(value)>;
    if (!what.has(g)) return R();
    return errors_.has(g) ? R::missing(Missing::kError) : R(value);
  };
  s.utilization_gpu_pct = value_or_error(MetricGroup::kUtilization, 50U + index);
  s.memory_used_bytes = value_or_error(MetricGroup::kMemory, std::uint64_t{1} << 30);
  s.temperature_gpu_c = value_or_error(MetricGroup::kTemperature, 60U);
  s.power_draw_w = value_or_error(MetricGroup::kPower, 400.0);
  std::uint64_t energy_mj = 0;
  if (what.has(MetricGroup::kEnergy)) {
    std::lock_guard lock(mutex_);  // shared by every GPU's reader
    energy_mj = energy_mj_ += 1000;
  }
  s.energy_mj = value_or_error(MetricGroup::kEnergy, energy_mj);
  return s;
}

Reading<std::vector<GpuProcess>> FakeBackend::processes(unsigned index) {
  const MonoClock::time_point now = clock_->now();
  log({index, 0, true, now});
  clock_->advance(process_cost_);
  if (lost_now(index, now)) return Reading<std::vector<GpuProcess>>::missing(Missing::kGpuLost);
  GpuProcess p;
  p.pid = 4000000 + index;  // above any real PID: the host details come back missing
  p.used_memory_bytes = std::uint64_t{1} << 30;
  return std::vector<GpuProcess>{p};
}

}  // namespace gpumon::testing
