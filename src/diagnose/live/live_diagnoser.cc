// SPDX-License-Identifier: MIT
#include "diagnose/live/live_diagnoser.h"

#include "diagnose/finding_identity.h"

namespace gpumon::diagnose {

FindingChange compare_findings(const Diagnosis& before, const Diagnosis& after) {
  const FindingMatch m = match_findings(before.findings, after.findings);
  FindingChange change;
  for (std::size_t j : m.appeared) change.appeared.push_back(after.findings[j]);
  for (std::size_t i : m.cleared) change.cleared.push_back(before.findings[i]);
  for (std::size_t j : m.changed) change.changed.push_back(after.findings[j]);
  return change;
}

LiveDiagnoser::LiveDiagnoser(LiveDiagnoserOptions options)
    : options_(std::move(options)),
      window_(options_.window),
      latest_(std::make_shared<const Diagnosis>()) {}

LiveDiagnoser::~LiveDiagnoser() {
  stop();
}

void LiveDiagnoser::set_devices(const std::vector<DeviceStatic>& devices) {
  std::lock_guard lock(data_mu_);
  window_.set_devices(devices);
}

void LiveDiagnoser::add_listener(Listener listener) {
  std::lock_guard lock(eval_mu_);
  listeners_.push_back(std::move(listener));
}

// The sinks must never throw (sampler thread, agent thread): a bad_alloc loses that item.
void LiveDiagnoser::on_tick(const TickSample& tick) {
  try {
    std::lock_guard lock(data_mu_);
    window_.add_tick(tick);
  } catch (...) {
  }
}

void LiveDiagnoser::on_event(const GpuEvent& event) {
  try {
    std::lock_guard lock(data_mu_);
    window_.add_event(event);
  } catch (...) {
  }
}

void LiveDiagnoser::on_processes(const ProcessSnapshot& snapshot) {
  try {
    std::lock_guard lock(data_mu_);
    window_.add_processes(snapshot);
  } catch (...) {
  }
}

void LiveDiagnoser::on_step(const training::Step& step) {
  try {
    std::lock_guard lock(data_mu_);
    window_.add_step(step);
  } catch (...) {
  }
}

void LiveDiagnoser::on_rank_event(const training::RankEvent& event) {
  try {
    std::lock_guard lock(data_mu_);
    window_.add_rank_event(event);
  } catch (...) {
  }
}

void LiveDiagnoser::on_process_sample(const training::ProcessSample& sample) {
  try {
    std::lock_guard lock(data_mu_);
    window_.add_process_sample(sample);
  } catch (...) {
  }
}

void LiveDiagnoser::start() {
  std::lock_guard lock(thread_mu_);
  if (thread_.joinable()) return;
  stopping_ = false;
  thread_ = std::thread([this] { run(); });
}

void LiveDiagnoser::stop() {
  std::thread t;
  {
    std::lock_guard lock(thread_mu_);
    stopping_ = true;
    t = std::move(thread_);
  }
  wake_.notify_all();
  if (t.joinable()) t.join();
}

void LiveDiagnoser::run() {
  std::unique_lock lock(thread_mu_);
  while (!wake_.wait_for(lock, options_.period, [this] { return stopping_; })) {
    lock.unlock();
    try {
      evaluate_now();
    } catch (...) {  // a rule that threw: skip this evaluation, try again next period
    }
    lock.lock();
  }
}

bool LiveDiagnoser::evaluate_now() {
  std::lock_guard eval_lock(eval_mu_);
  const auto t0 = std::chrono::steady_clock::now();
  RunData run;
  {
    std::lock_guard lock(data_mu_);
    window_.prune();
    run = window_.run_data();
  }
  auto next = std::make_shared<const Diagnosis>(diagnose(run, options_.thresholds));
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  std::shared_ptr<const Diagnosis> prev;
  {
    std::lock_guard lock(pub_mu_);
    prev = latest_;
  }
  const FindingChange change = compare_findings(*prev, *next);
  {
    std::lock_guard lock(pub_mu_);
    latest_ = next;
    ++evaluations_;
    last_eval_s_ = took;
  }
  const bool changed =
      !change.appeared.empty() || !change.cleared.empty() || !change.changed.empty();
  if (changed)
    for (const auto& l : listeners_) {
      try {
        l(*next, change);
      } catch (...) {
      }
    }
  return changed;
}

std::shared_ptr<const Diagnosis> LiveDiagnoser::latest() const {
  std::lock_guard lock(pub_mu_);
  return latest_;
}

std::uint64_t LiveDiagnoser::evaluations() const {
  std::lock_guard lock(pub_mu_);
  return evaluations_;
}

double LiveDiagnoser::last_evaluation_s() const {
  std::lock_guard lock(pub_mu_);
  return last_eval_s_;
}

}  // namespace gpumon::diagnose
