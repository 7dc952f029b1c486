// SPDX-License-Identifier: MIT
// Where the live view's frames come from: the node pipeline's sampler, ticking at the view's
// interval, so `gpumon watch` shows what `serve` and `record` read (GPM's SM activity, PCIe
// traffic and the driver's power peaks included, which only the sampler's tasks fill), and each
// frame is the newest tick rather than a read of its own. What that tick lacks because its task
// was not due (temperature and clocks at 1 Hz, GPM, PCIe) is its last known reading, held as
// /metrics holds it (sampler/last_known.h), so a fast view does not flicker to N/A. The
// processes are the sampler's newest lists, with this host's details read for the frame.
//
// Thread-safety: one thread (the view's); the sampler runs its own.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <ostream>
#include <string>

#include "cli/console.h"
#include "cli/snapshot.h"
#include "host/process_inspector.h"
#include "node/node_pipeline.h"
#include "sampler/last_known.h"

namespace gpumon::cli {

class WatchSource {
 public:
  /// Opens the GPUs and starts sampling every `interval_s` (clamped to the sampler's 10 ms to
  /// 60 s); nullptr, having said why on console.err, when there are none.
  static std::unique_ptr<WatchSource> open(double interval_s, const Console& console);

  /// The newest tick as a Snapshot, waiting up to `wait` for the first one; nullopt when none
  /// came. `now` is the monotonic time CPU % intervals are measured against.
  std::optional<Snapshot> latest(host::ProcessInspector& inspector, const std::string& hostname,
                                 std::chrono::milliseconds wait);

 private:
  WatchSource() = default;
  // The pipeline's own lines go nowhere: the view labels simulated GPUs itself, and a line on
  // stderr would stay on the terminal's main screen after the view.
  std::ostream quiet_{nullptr};
  std::unique_ptr<node::NodePipeline> pipeline_;

  // Each GPU's newest sample with its held readings filled in (a GPU a tick left out keeps
  // its last one), and the newest XID per GPU (for a lost GPU's row). The sampler's thread
  // writes, the view's reads.
  class FrameSink : public SampleSink {
   public:
    explicit FrameSink(MonoClock::duration hold) : hold_(hold) {}
    void on_tick(const TickSample& tick) override;
    void on_processes(const ProcessSnapshot&) override {}
    void on_event(const GpuEvent& event) override;
    /// The newest tick's times, with every GPU's newest sample in index order.
    std::optional<TickSample> newest() const;
    std::optional<std::uint64_t> last_xid(unsigned gpu) const;

   private:
    const MonoClock::duration hold_;
    mutable std::mutex mu_;
    std::map<unsigned, LastKnown> known_;
    std::optional<TickSample> newest_;  ///< times only
    std::map<unsigned, DeviceSample> samples_;
    std::map<unsigned, std::uint64_t> last_xid_;
  };
  std::shared_ptr<FrameSink> frames_;
};

}  // namespace gpumon::cli
