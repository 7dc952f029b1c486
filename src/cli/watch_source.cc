// SPDX-License-Identifier: MIT
#include "cli/watch_source.h"

#include <algorithm>
#include <cmath>
#include <thread>

#include "cli/backend_open.h"
#include "cli/snapshot_gather.h"

namespace gpumon::cli {

std::unique_ptr<WatchSource> WatchSource::open(double interval_s, const Console& console) {
  node::NodeOptions n;
  n.name = "watch";
  n.open_backend = [&console] { return open_backend(console, nullptr); };
  const auto ms = std::clamp<long>(std::lround(interval_s * 1000.0), 10, 60000);
  n.sampler.interval = std::chrono::milliseconds(ms);
  // What the view shows, no more: the fan, the graphics clock and instant power cost
  // microseconds a GPU a tick; energy milliseconds. The host details are read per frame.
  n.sampler.metrics = snapshot_metrics();  // static details go to their own task
  n.sampler.energy = false;
  n.sampler.host_process_details = false;
  n.sampler.process_period = n.sampler.interval;
  n.sampler.pcie = true;  // about 40 ms of waiting per GPU a second, on its reader thread
  n.sampler.history_capacity = 2;
  n.diagnose = false;
  std::unique_ptr<WatchSource> source(new WatchSource());
  int exit_code = 0;
  source->pipeline_ = node::NodePipeline::open(std::move(n), source->quiet_, exit_code);
  if (!source->pipeline_) return nullptr;
  source->frames_ =
      std::make_shared<FrameSink>(hold_time(source->pipeline_->sampler()->config().interval));
  source->pipeline_->add_sample_sink(source->frames_);
  source->pipeline_->start();
  return source;
}

std::optional<Snapshot> WatchSource::latest(host::ProcessInspector& inspector,
                                            const std::string& hostname,
                                            std::chrono::milliseconds wait) {
  const Sampler& sampler = *pipeline_->sampler();
  const auto deadline = std::chrono::steady_clock::now() + wait;
  std::optional<TickSample> newest = frames_->newest();
  while (!newest && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    newest = frames_->newest();
  }
  if (!newest) return std::nullopt;
  const TickSample& tick = *newest;

  Snapshot snap;
  set_system(snap, sampler.system(), hostname);
  snap.taken_at = tick.wall_time;
  const std::vector<DeviceStatic> devices = sampler.devices();
  const std::vector<ProcessSnapshot> lists = sampler.latest_processes();
  std::vector<GpuProcess> processes;
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const auto sample =
        std::find_if(tick.gpus.begin(), tick.gpus.end(),
                     [&](const DeviceSample& s) { return s.index == devices[i].index; });
    if (sample == tick.gpus.end()) continue;  // no tick has had it yet
    // Not listed yet (the first tick's list comes with it; a lost GPU's never).
    Reading<std::size_t> count =
        Reading<std::size_t>::missing(sample->lost ? Missing::kGpuLost : Missing::kNotAvailable);
    for (const ProcessSnapshot& list : lists) {
      if (list.gpu != devices[i].index) continue;
      count = list.processes.size();
      for (GpuProcess p : list.processes) {
        p.gpu_index = list.gpu;
        processes.push_back(std::move(p));
      }
    }
    add_gpu(snap, devices[i], *sample, std::move(count));
    snap.gpus.back().last_xid = frames_->last_xid(devices[i].index);
  }
  set_processes(snap, std::move(processes), inspector, std::chrono::steady_clock::now());
  return snap;
}

void WatchSource::FrameSink::on_tick(const TickSample& tick) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const DeviceSample& s : tick.gpus) {
    LastKnown& known = known_[s.index];
    known.update(s, tick.mono_time, hold_);
    DeviceSample& shown = samples_[s.index] = s;
    known.fill(shown);
  }
  newest_ = TickSample{tick.wall_time, tick.mono_time, {}};
}

void WatchSource::FrameSink::on_event(const GpuEvent& event) {
  if (event.kind != GpuEvent::Kind::kXid) return;
  std::lock_guard<std::mutex> lock(mu_);
  last_xid_[event.gpu] = event.value;
}

std::optional<TickSample> WatchSource::FrameSink::newest() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::optional<TickSample> out = newest_;
  if (out) {
    for (const auto& [index, s] : samples_) out->gpus.push_back(s);
  }
  return out;
}

std::optional<std::uint64_t> WatchSource::FrameSink::last_xid(unsigned gpu) const {
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = last_xid_.find(gpu);
  return it == last_xid_.end() ? std::nullopt : std::optional<std::uint64_t>(it->second);
}

}  // namespace gpumon::cli
