// SPDX-License-Identifier: MIT
// FakeBackend: an in-memory GpuBackend for sampler tests. Every call is logged with the fake
// clock's time, charges a configurable cost to that clock (so the sampler "measures" it),
// and GPUs can be lost over time windows, answer errors or throw. Test-only.
//
// Thread-safety: configure before the sampler starts; calls() and the sampler's calls (from
// several GPU readers) may then run concurrently (a mutex guards the log and the energy).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "gpu/gpu_backend.h"
#include "sampler/testing/fake_clock.h"

namespace gpumon::testing {

class FakeBackend final : public GpuBackend {
 public:
  struct Call {
    unsigned gpu = 0;
    std::uint32_t what = 0;  ///< MetricSet bits; 0 for processes()
    bool processes = false;
    MonoClock::time_point at{};
  };

  FakeBackend(unsigned gpus, std::shared_ptr<FakeClock> clock);

  /// Each sample() asking for `group` moves the clock by `cost`.
  void set_cost(MetricGroup group, MonoClock::duration cost) { costs_[group] = cost; }
  void set_process_cost(MonoClock::duration cost) { process_cost_ = cost; }
  /// GPU `gpu` answers GPU_IS_LOST from `from` until `to`.
  void set_lost(unsigned gpu, MonoClock::time_point from, MonoClock::time_point to);
  /// Readings of `group` come back Missing::kError.
  void set_error(MetricGroup group) { errors_ |= group; }
  /// sample() throws std::runtime_error when asked for `group`.
  void set_throw(MetricGroup group) { throws_ |= group; }

  std::vector<Call> calls() const;

  const SystemInfo& system() const override { return system_; }
  unsigned device_count() const override { return static_cast<unsigned>(devices_.size()); }
  const DeviceStatic& device(unsigned index) const override { return devices_.at(index); }
  DeviceSample sample(unsigned index, MetricSet what) override;
  Reading<std::vector<GpuProcess>> processes(unsigned index) override;

 private:
  bool lost_now(unsigned gpu, MonoClock::time_point now) const;
  void log(Call call);

  std::shared_ptr<FakeClock> clock_;
  SystemInfo system_;
  std::vector<DeviceStatic> devices_;
  std::map<MetricGroup, MonoClock::duration> costs_;
  MonoClock::duration process_cost_{0};
  std::multimap<unsigned, std::pair<MonoClock::time_point, MonoClock::time_point>> lost_;
  MetricSet errors_;
  MetricSet throws_;

  mutable std::mutex mutex_;  // guards what follows
  std::vector<Call> calls_;
  std::uint64_t energy_mj_ = 0;
};

}  // namespace gpumon::testing
