// SPDX-License-Identifier: MIT
// LiveDiagnoser: the diagnosis engine on a running system. It is a sampler sink (GPU ticks,
// events, processes) and takes the agent server's steps and rank events; it keeps the last
// `window` of them in a bounded LiveWindow (live_window.h says the bound: ~30 MB at most with
// the defaults), and every `period` on its own thread builds RunData from the window, runs
// diagnose(), publishes the Diagnosis and tells the listeners when the set of findings changed
// (a finding appearing, clearing or moving to other GPUs / ranks, by the identity of
// diagnose/finding_identity.h; a changed summary or severity of the same finding is not a
// change).
//
// Cost of one evaluation (copy of the window + finish_run_data + diagnose) for 8 GPUs x 10 Hz
// x 10 min (48,000 samples) + 8 ranks x 10 steps/s x 10 min (48,000 steps), measured by the
// LiveDiagnoserCost test (docs/PERFORMANCE.md, "Live diagnoses"): 86-107 ms wall in a Release
// build on a loaded 2-core container (about 2% of a core at the default 5 s period), ~0.4 s in
// a Debug build. The sinks only append to the window under its mutex (amortised O(1)); an
// evaluation holds that mutex only while it copies the window, and runs diagnose() without it.
//
// Thread-safety: every member may be called from any thread. Listeners run on the diagnoser's
// thread (or the caller of evaluate_now()), one call at a time, and must not call stop().
// on_* never throw and never block on an evaluation.
#pragma once

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "diagnose/diagnosis.h"
#include "diagnose/live/live_window.h"
#include "sampler/sample_sink.h"
#include "training/training_types.h"

namespace gpumon::diagnose {

struct LiveDiagnoserOptions {
  std::chrono::milliseconds period{5000};
  LiveWindowLimits window;  ///< span defaults to 10 min
  Thresholds thresholds;
};

/// What changed between two evaluations.
struct FindingChange {
  std::vector<Finding> appeared;
  std::vector<Finding> cleared;  ///< as they were last seen
  std::vector<Finding> changed;  ///< still there, on other GPUs / ranks (as they are now)
};

class LiveDiagnoser : public SampleSink, public training::StepSink {
 public:
  /// (the new diagnosis, what changed); called only when something changed.
  using Listener = std::function<void(const Diagnosis&, const FindingChange&)>;

  explicit LiveDiagnoser(LiveDiagnoserOptions options = {});
  ~LiveDiagnoser() override;  ///< stops
  LiveDiagnoser(const LiveDiagnoser&) = delete;
  LiveDiagnoser& operator=(const LiveDiagnoser&) = delete;

  void set_devices(const std::vector<DeviceStatic>& devices);
  void add_listener(Listener listener);

  void on_tick(const TickSample& tick) override;
  void on_event(const GpuEvent& event) override;
  void on_processes(const ProcessSnapshot& snapshot) override;
  void on_step(const training::Step& step) override;
  void on_rank_event(const training::RankEvent& event) override;
  void on_process_sample(const training::ProcessSample& sample) override;

  /// Starts the thread (first evaluation after one period). Idempotent.
  void start();
  /// Joins the thread. Idempotent.
  void stop();
  /// One evaluation now, on the caller's thread (tests, one-shot use); true when the findings
  /// changed.
  bool evaluate_now();

  /// The latest diagnosis (an empty one, score 100, before the first evaluation).
  std::shared_ptr<const Diagnosis> latest() const;
  std::uint64_t evaluations() const;
  /// Wall seconds the last evaluation took.
  double last_evaluation_s() const;

 private:
  void run();

  const LiveDiagnoserOptions options_;
  mutable std::mutex data_mu_;  // window_
  LiveWindow window_;
  std::mutex eval_mu_;  // one evaluation at a time; listeners_
  std::vector<Listener> listeners_;
  mutable std::mutex pub_mu_;  // latest_, evaluations_, last_eval_s_
  std::shared_ptr<const Diagnosis> latest_;
  std::uint64_t evaluations_ = 0;
  double last_eval_s_ = 0;
  std::mutex thread_mu_;  // thread_, stopping_
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

/// What changed from `before` to `after`, by diagnose/finding_identity.h's identity: a finding
/// whose subjects changed is `changed`, it neither clears nor appears; `cleared` only when no
/// finding of that id covers any of its subjects any more.
FindingChange compare_findings(const Diagnosis& before, const Diagnosis& after);

}  // namespace gpumon::diagnose
