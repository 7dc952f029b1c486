// SPDX-License-Identifier: MIT
#include "diagnose/live/live_diagnoser.h"

#include <algorithm>

namespace gpumon::diagnose {

namespace {

template <typename T>
bool overlap(const std::vector<T>& a, const std::vector<T>& b) {
  for (const T& x : a)
    if (std::find(b.begin(), b.end(), x) != b.end()) return true;
  return false;
}

bool same_finding(const Finding& a, const Finding& b) {
  if (a.id != b.id) return false;
  const bool a_none = a.gpus.empty() && a.ranks.empty() && a.pids.empty();
  const bool b_none = b.gpus.empty() && b.ranks.empty() && b.pids.empty();
  if (a_none || b_none) return a_none && b_none;
  return overlap(a.gpus, b.gpus) || overlap(a.ranks, b.ranks) || overlap(a.pids, b.pids);
}

}  // namespace

FindingChange compare_findings(const Diagnosis& before, const Diagnosis& after) {
  FindingChange change;
  std::vector<bool> matched(before.findings.size(), false);
  for (const Finding& now : after.findings) {
    bool found = false;
    for (std::size_t i = 0; i < before.findings.size(); ++i) {
      const Finding& then = before.findings[i];
      if (!same_finding(then, now)) continue;
      if (!found && (then.gpus != now.gpus || then.ranks != now.ranks || then.pids != now.pids))
        change.changed.push_back(now);
      found = true;
      matched[i] = true;
    }
    if (!found) change.appeared.push_back(now);
  }
  for (std::size_t i = 0; i < before.findings.size(); ++i)
    if (!matched[i]) change.cleared.push_back(before.findings[i]);
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
