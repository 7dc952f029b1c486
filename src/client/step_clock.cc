// SPDX-License-Identifier: MIT
#include "client/step_clock.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace gpumon::client {
namespace {

using Clock = StepClock::Clock;

double seconds(Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

constexpr double kMaxWallDrift = 1e-3;  // seconds

Clock::duration interval(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

}  // namespace

StepClock::StepClock(StepClockOptions options)
    : timed_(options.gpu_timer != nullptr), options_(std::move(options)) {
  resync(Clock::now());
  t0_ = now();
  maybe_begin_gpu(t0_.at);
}

Clock::time_point StepClock::now_at() {
  last_now_ = Clock::now();
  return last_now_;
}

StepClock::Boundary StepClock::now() {
  const Clock::time_point at = now_at();
  return {at, seconds(at.time_since_epoch()) + wall_offset_s_};
}

void StepClock::resync(Clock::time_point at) {
  const Clock::time_point steady = Clock::now();
  const double wall =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  wall_offset_s_ = wall - seconds(steady.time_since_epoch());
  resync_next_ = at + kResyncInterval;
}

void StepClock::set_allocator_source(std::function<AllocatorStats()> source, double interval_s) {
  options_.allocator_source = std::move(source);
  options_.allocator_interval_s = interval_s;
  mem_next_ = {};
}

void StepClock::set_gpu_timer(std::shared_ptr<GpuTimer> timer, double interval_s) {
  options_.gpu_timer = std::move(timer);
  options_.gpu_interval_s = interval_s;
  timed_ = options_.gpu_timer != nullptr;
  gpu_begun_.reset();
  waiting_.reset();  // its events belong to the old timer
  gpu_next_ = {};
  maybe_begin_gpu(now_at());  // the step under way is timed
}

void StepClock::step() {
  pending_.reset();
  scoped_start_.reset();
  emit(t0_, now());
}

void StepClock::step_deferred() {
  apply_pending();
  pending_ = now();
}

void StepClock::begin_scoped() {
  pending_.reset();  // step() just before this was the scoped step's start, not a boundary
  scoped_start_ = now();
  restart_gpu(scoped_start_->at);  // the body only, like the CPU time
}

bool StepClock::end_scoped() {
  if (!scoped_start_) return false;
  const Boundary start = *scoped_start_;
  scoped_start_.reset();
  emit(start, now());
  return true;
}

void StepClock::begin_epoch() {
  apply_pending();
  if (fetched_ || scoped_start_) return;
  t0_ = now();  // the time before the first batch is not a step
  data_wait_s_ = 0;
  restart_gpu(t0_.at);
}

void StepClock::fetch_begin() {
  apply_pending();
  wait_start_ = now_at();
}

void StepClock::fetch_end() {
  if (!wait_start_) return;
  data_wait_s_ += seconds(now_at() - *wait_start_);
  wait_start_.reset();
  fetched_ = wait_measured_ = true;
}

void StepClock::add_data_wait(double s) {
  if (std::isfinite(s) && s > 0) data_wait_s_ += s;
  fetched_ = wait_measured_ = true;
}

void StepClock::set_next_allocator_stats(const AllocatorStats& stats) {
  next_mem_ = stats;
  mem_given_ = true;
}

void StepClock::set_next_gpu_seconds(double s) {
  if (std::isfinite(s) && s >= 0) next_gpu_s_ = s;
}

bool StepClock::allocator_stats_due() const {
  return Clock::now() >= mem_next_;
}

void StepClock::finish() {
  apply_pending();
  send_waiting();
}

std::vector<std::string> StepClock::recent() const {
  std::vector<std::string> lines;
  // The drained steps in the ring, then those still in the outbox: the last keep_recent.
  const std::size_t n = recent_.size();
  const std::size_t queued = std::min(out_.size(), options_.keep_recent);
  const std::size_t from_ring = std::min(n, options_.keep_recent - queued);
  std::string line;
  for (std::size_t i = n - from_ring; i < n; ++i) {
    // Before the ring is full, recent_next_ == n and the oldest is at 0.
    step_message(recent_[(recent_next_ + i) % n], line);
    lines.push_back(line);
  }
  for (std::size_t i = out_.size() - queued; i < out_.size(); ++i) {
    step_message(out_[i], line);
    lines.push_back(line);
  }
  if (waiting_) {
    step_message(waiting_->fields, line);
    lines.push_back(line);
  }
  return lines;
}

void StepClock::apply_pending() {
  if (!pending_) return;
  const Boundary end = *pending_;
  pending_.reset();
  emit(t0_, end);
}

void StepClock::emit(const Boundary& start, const Boundary& end) {
  StepFields f;
  f.step = step_;
  f.t_start_s = start.wall;
  f.cpu_step_s = std::max(0.0, seconds(end.at - start.at));  // < 0: a resync between
  if (wait_measured_) f.data_wait_s = data_wait_s_;
  f.mem = read_mem(end.at);
  ++step_;
  // The next step starts where this one ended (contiguous steps), unless the wall clock moved
  // away from the monotonic one (NTP): then at the wall clock's time.
  const double t_end = f.t_start_s + f.cpu_step_s;
  t0_ = {end.at, std::abs(end.wall - t_end) > kMaxWallDrift ? end.wall : t_end};
  data_wait_s_ = 0;
  fetched_ = false;
  if (end.at >= resync_next_) resync(end.at);  // after the step's times: they use one offset
  if (!timed_) {
    f.gpu_step_s = std::exchange(next_gpu_s_, std::nullopt);
    send(f);
    return;
  }
  send_waiting();  // the previous timed step first: steps go out in order
  const std::optional<int> begun = std::exchange(gpu_begun_, std::nullopt);
  if (!begun) {  // this step was not timed
    send(f);
    maybe_begin_gpu(end.at);
    return;
  }
  waiting_ = Waiting{f, *begun, options_.gpu_timer->record()};
  if (end.at >= gpu_next_) {  // this step's end event also starts the next timed step
    gpu_next_ = end.at + interval(options_.gpu_interval_s);
    gpu_begun_ = waiting_->to;
  }
}

std::optional<AllocatorStats> StepClock::read_mem(Clock::time_point at) {
  if (mem_given_) {
    mem_given_ = false;
    mem_next_ = at + interval(options_.allocator_interval_s);
    return std::exchange(next_mem_, std::nullopt);
  }
  if (at < mem_next_ || !options_.allocator_source) return std::nullopt;
  mem_next_ = at + interval(options_.allocator_interval_s);  // before a call that may throw
  return options_.allocator_source();
}

void StepClock::send(const StepFields& fields) {
  out_.push_back(fields);
}

void StepClock::remember(const StepFields& fields) {
  if (options_.keep_recent == 0) return;
  if (recent_.size() < options_.keep_recent) {
    recent_.push_back(fields);
    recent_next_ = recent_.size() % options_.keep_recent;
  } else {
    recent_[recent_next_] = fields;
    recent_next_ = (recent_next_ + 1) % options_.keep_recent;
  }
}

void StepClock::send_waiting() {
  if (!waiting_) return;
  Waiting w = std::move(*waiting_);
  waiting_.reset();
  w.fields.gpu_step_s = options_.gpu_timer->elapsed(w.from, w.to);  // nullopt: not done, no wait
  send(w.fields);
}

void StepClock::maybe_begin_gpu(Clock::time_point at) {
  if (timed_ && at >= gpu_next_) {
    gpu_next_ = at + interval(options_.gpu_interval_s);
    gpu_begun_ = options_.gpu_timer->record();
  }
}

void StepClock::restart_gpu(Clock::time_point at) {
  if (!timed_) return;
  if (gpu_begun_) {
    gpu_begun_ = options_.gpu_timer->record();  // the step really starts now
  } else {
    maybe_begin_gpu(at);
  }
}

}  // namespace gpumon::client
