// SPDX-License-Identifier: MIT
// StepFanout: one StepSink that hands every step and rank event to each of its sinks in the
// order they were added (the recording, the exporter's training state, the live diagnoser).
//
// Thread-safety: add() from any thread, also while the agent's thread delivers; a sink added
// during a delivery gets the next one.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "training/training_types.h"

namespace gpumon::node {

class StepFanout final : public training::StepSink {
 public:
  void add(std::shared_ptr<training::StepSink> sink) {
    if (!sink) return;
    std::lock_guard lock(mutex_);
    sinks_.push_back(std::move(sink));
  }
  void on_step(const training::Step& step) override {
    std::lock_guard lock(mutex_);
    for (const auto& s : sinks_) s->on_step(step);
  }
  void on_rank_event(const training::RankEvent& event) override {
    std::lock_guard lock(mutex_);
    for (const auto& s : sinks_) s->on_rank_event(event);
  }
  void on_process_sample(const training::ProcessSample& sample) override {
    std::lock_guard lock(mutex_);
    for (const auto& s : sinks_) s->on_process_sample(sample);
  }

 private:
  std::mutex mutex_;
  std::vector<std::shared_ptr<training::StepSink>> sinks_;
};

}  // namespace gpumon::node
