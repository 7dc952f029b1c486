// SPDX-License-Identifier: MIT
#include "cli/snapshot_findings.h"

#include "diagnose/diagnosis.h"
#include "diagnose/live/live_window.h"

namespace gpumon::cli {

std::vector<SnapshotFinding> snapshot_findings(const Snapshot& snap) {
  diagnose::LiveWindow window;
  std::vector<DeviceStatic> devices;
  TickSample tick;
  tick.wall_time = snap.taken_at;
  for (const GpuSnapshot& g : snap.gpus) {
    devices.push_back(g.info);
    tick.gpus.push_back(g.sample);
    tick.gpus.back().index = g.info.index;
    if (tick.gpus.back().wall_time == WallClock::time_point{})
      tick.gpus.back().wall_time = snap.taken_at;
  }
  window.set_devices(devices);
  window.add_tick(tick);
  for (const ProcessRow& p : snap.processes)
    window.add_processes({p.gpu.gpu_index, snap.taken_at, {p.gpu}});
  const diagnose::Diagnosis d = diagnose::diagnose(window.run_data());
  std::vector<SnapshotFinding> out;
  for (const diagnose::Finding& f : d.findings)
    out.push_back({f.id, std::string(diagnose::severity_name(f.severity)), f.gpus, f.summary});
  return out;
}

}  // namespace gpumon::cli
