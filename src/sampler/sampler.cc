// SPDX-License-Identifier: MIT
#include "sampler/sampler.h"

#include <time.h>

#include <algorithm>
#include <stdexcept>

#include "gpu/metric_catalog.h"
#include "host/proc_files.h"
#include "host/user_names.h"
#include "sampler/sample_errors.h"

namespace gpumon {

using std::chrono::duration_cast;
using std::chrono::microseconds;

struct Sampler::TaskState {
  Task task;
  MonoClock::duration period{};                 // as scheduled now; 0 = every tick
  std::vector<MonoClock::time_point> next_due;  // per GPU
  std::vector<char> done;                       // once tasks: per GPU
  std::vector<char> edge_due;                   // edges tasks: per GPU, read at the start
  TaskStats stats;
  double total_cost_us = 0;
};

/// The processes' host details from /proc, read on the sampler thread.
class Sampler::HostDetails {
 public:
  HostDetails() : inspector_(files_, users_) {}
  host::ProcessInspector& inspector() { return inspector_; }

 private:
  host::DiskProcFiles files_;
  host::UserNames users_;
  host::ProcessInspector inspector_;
};

namespace {

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

double to_us(MonoClock::duration d) {
  return std::chrono::duration<double, std::micro>(d).count();
}

}  // namespace

Sampler::Sampler(std::shared_ptr<GpuBackend> backend, SamplerConfig config,
                 std::shared_ptr<Clock> clock)
    : backend_(std::move(backend)),
      config_(config),
      clock_(clock ? std::move(clock) : std::make_shared<SteadyClock>()),
      history_((validate(config), backend_ ? history_ticks(config, backend_->device_count()) : 1)),
      events_(config.event_capacity) {
  if (!backend_) throw std::invalid_argument("sampler: no GPU backend");
  system_ = backend_->system();
  device_count_ = backend_->device_count();
  lost_.assign(device_count_, 0);
  for (unsigned i = 0; i < device_count_; ++i) devices_.push_back(backend_->device(i));
  for (Task& t : make_builtin_tasks(config_)) add_task(std::move(t));
  if (config_.processes && config_.host_process_details) {
    host_ = std::make_unique<HostDetails>();
    host_stats_.name = "host_details";  // one /proc pass for every GPU's processes
  }
}

Sampler::~Sampler() {
  stop();
}

void Sampler::add_sink(std::shared_ptr<SampleSink> sink) {
  std::lock_guard lock(mutex_);
  if (started_) throw std::logic_error("sampler: add sinks before start()");
  if (sink) sinks_.push_back(std::move(sink));
}

void Sampler::add_task(Task task) {
  std::lock_guard lock(mutex_);
  if (started_) throw std::logic_error("sampler: add tasks before start()");
  if (!task.run) throw std::invalid_argument("sampler: task '" + task.name + "' has no function");
  TaskState s;
  s.period = task.period.count() > 0 ? MonoClock::duration(std::max(task.period, config_.interval))
                                     : MonoClock::duration(0);
  s.done.assign(task.once ? device_count_ : 0, 0);
  s.stats.name = task.name;
  s.task = std::move(task);
  tasks_.push_back(std::move(s));
}

void Sampler::start() {
  std::lock_guard join_lock(join_mutex_);  // thread_ is guarded by join_mutex_
  std::lock_guard lock(mutex_);
  if (started_) throw std::logic_error("sampler: start() called twice");
  if (stop_.requested()) throw std::logic_error("sampler: start() after stop()");
  started_ = true;
  if (config_.events) {
    // Before the threads start, so only this thread touches the backend here.
    event_stream_ = backend_->watch_events([this](const GpuEvent& e) { queue_event(e); });
    stats_.events_watched = event_stream_ != nullptr;
  }
  auto functions = std::make_shared<detail::TaskFunctions>();
  for (const TaskState& t : tasks_) functions->push_back(t.task.run);
  functions_ = std::move(functions);
  hung_on_.assign(device_count_, -1);
  thread_ = std::thread([this] { run(); });
}

void Sampler::stop() {
  std::lock_guard join_lock(join_mutex_);
  stop_.request();
  {
    std::lock_guard lock(wake_mutex_);
    if (waiting_) waiting_->interrupt();
  }
  if (thread_.joinable()) thread_.join();
  // The final tick waited for the readers (config_.stop_timeout): one still busy is inside a
  // hung call and is left to end when it returns.
  for (Reader& r : readers_) r.reader->finish(std::chrono::steady_clock::now());
  event_stream_.reset();  // waits until its callback can no longer run
}

bool Sampler::running() const {
  std::lock_guard lock(mutex_);
  return started_ && !stop_.requested();
}

std::vector<DeviceStatic> Sampler::devices() const {
  std::lock_guard lock(mutex_);
  return devices_;
}

SamplerStats Sampler::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

std::vector<ProcessSnapshot> Sampler::latest_processes() const {
  std::lock_guard lock(mutex_);
  return processes_;
}

void Sampler::run() noexcept {
  const MonoClock::duration interval = config_.interval;
  SamplerStats stats;
  {
    std::lock_guard lock(mutex_);
    stats.events_watched = stats_.events_watched;
  }
  const MonoClock::time_point t0 = clock_->now();
  for (TaskState& t : tasks_) {
    // A spread task starts GPU g g/n of the way through its period, on a tick boundary, so
    // one tick makes at most about n * interval / period of its slow calls.
    const std::int64_t ticks_per_period = t.period / interval;
    t.next_due.assign(device_count_, t0);
    t.edge_due.assign(t.task.edges ? device_count_ : 0, 1);
    for (unsigned gpu = 0; t.task.spread && gpu < device_count_; ++gpu) {
      t.next_due[gpu] += (ticks_per_period * gpu / device_count_) * interval;
    }
  }
  std::uint64_t k = 0;
  while (true) {
    const MonoClock::time_point started = clock_->now();
    // The reader gets until a tenth of an interval before the next slot (a whole interval less
    // a tenth when this tick started late), so publishing ends before the next tick is due, but
    // at least min_reader_wait.
    const MonoClock::time_point deadline = std::max<MonoClock::time_point>(
        {t0 + (k + 1) * interval - interval / 10, started + interval - interval / 10,
         started + config_.min_reader_wait});
    bool dropped = false;  // stopped mid-tick: nothing was published, so it is not counted
    try {
      dropped = !tick(started, deadline, stats, TickKind::kScheduled);
    } catch (...) {
      ++stats.exceptions;
    }
    const MonoClock::time_point finished = clock_->now();
    const MonoClock::duration took = finished - started;
    if (!dropped) ++stats.ticks;
    if (took > interval) ++stats.overruns;
    stats.last_tick = started;
    stats.last_tick_duration_us = to_us(took);
    stats.max_tick_duration_us = std::max(stats.max_tick_duration_us, to_us(took));
    ++k;
    if (t0 + k * interval < finished) {  // overran: skip the slots already gone, stay aligned
      const auto next_k = static_cast<std::uint64_t>((finished - t0) / interval) + 1;
      stats.missed_ticks += next_k - k;
      k = next_k;
    }
    publish_stats(stats);
    if (clock_->sleep_until(t0 + k * interval, stop_)) break;
  }
  // The final tick: the counters read at the run's edges (energy) are read once more, so their
  // readings span the run up to now. It also passes on the events that came after the last
  // tick (an XID just before the run ended), so a recording that stops keeps them. It first
  // waits for the jobs of the tick stop() dropped, as long as that tick would have (a reader
  // late beyond it is stale, not worth the wait); each wait has half of stop_timeout at most.
  const MonoClock::duration half = config_.stop_timeout / 2;
  const MonoClock::time_point drain_deadline =
      std::min(unpublished_deadline_, clock_->now() + half);
  const bool final_tick =
      std::any_of(tasks_.begin(), tasks_.end(), [](const TaskState& t) { return t.task.edges; });
  try {
    if (unpublished_ >= 0) {
      Reader& r = readers_[static_cast<std::size_t>(unpublished_)];
      auto latch = std::make_shared<detail::TickLatch>(1);
      if (!r.reader->rebind(latch)) latch->count_down();  // finished meanwhile
      wait_for(latch, drain_deadline, TickKind::kFinal);
      bool details = false;
      collect(r, clock_->now(), TickKind::kFinal, stats, details);  // booked, not published
    }
    if (final_tick) {
      const MonoClock::time_point now = clock_->now();
      tick(now, now + half, stats, TickKind::kFinal);
      ++stats.ticks;
    } else {
      deliver_queued_events(stats);
    }
  } catch (...) {
    ++stats.exceptions;
  }
  publish_stats(stats);
}

void Sampler::publish_stats(SamplerStats& stats) {
  stats.thread_cpu_s = thread_cpu_seconds();
  for (const Reader& r : readers_) stats.thread_cpu_s += r.reader->thread_cpu_s();
  std::lock_guard lock(mutex_);
  stats.tasks.clear();
  for (TaskState& t : tasks_) {
    t.stats.period = duration_cast<microseconds>(t.period);
    t.stats.mean_cost_us = t.stats.runs ? t.total_cost_us / static_cast<double>(t.stats.runs) : 0;
    stats.tasks.push_back(t.stats);
  }
  if (host_) stats.tasks.push_back(host_stats_);
  stats_ = stats;
}

bool Sampler::tick(MonoClock::time_point now, MonoClock::time_point deadline, SamplerStats& stats,
                   TickKind kind) {
  const bool final = kind == TickKind::kFinal;
  TickSample tick = std::move(spare_);
  tick.gpus.clear();
  tick.mono_time = now;
  tick.wall_time = clock_->wall_now();
  std::vector<ProcessSnapshot> snapshots;
  bool details_read = false;
  deliver_queued_events(stats);
  // Readers back from a hung call: their GPU rejoins; what they read is booked as late.
  for (Reader& r : readers_) {
    if (r.hung_gpu < 0 || !r.reader->idle()) continue;
    for (const detail::GpuResult& late : r.reader->take()) {
      details_read = account(late, now, kind, stats, /*late=*/true) || details_read;
    }
    hung_on_[static_cast<unsigned>(r.hung_gpu)] = -1;
    r.hung_gpu = -1;
  }
  // One reader reads every GPU whose call has returned, in order. A tick whose calls are
  // expected to be slow (the first: every GPU's static details) gets twice their estimated
  // cost: a GPU is stale when its call is late beyond that, not merely slower than the interval.
  std::vector<detail::GpuJob> jobs;
  MonoClock::duration expected{0};
  for (unsigned gpu = 0; gpu < device_count_; ++gpu) {
    if (hung_on_[gpu] >= 0) continue;
    detail::GpuJob job{gpu, {}};
    for (std::size_t t = 0; t < tasks_.size(); ++t) {
      if (!is_due(tasks_[t], t, gpu, now, kind)) continue;
      job.tasks.push_back(t);
      expected += tasks_[t].task.estimated_cost;
    }
    jobs.push_back(std::move(job));
  }
  if (!final) deadline = std::max(deadline, now + 2 * expected);
  const std::size_t used = idle_reader();
  Reader& reader = readers_[used];
  const auto latch = std::make_shared<detail::TickLatch>(1);
  reader.reader->submit(std::move(jobs), latch, now);
  wait_for(latch, deadline, kind);
  // Stopped while the reader worked: drop the tick (the final tick, which comes after stop,
  // waits for this reader, then reads every GPU whose call has returned).
  if (!final && stop_.requested()) {
    unpublished_ = static_cast<int>(used);
    unpublished_deadline_ = deadline;
    return false;
  }
  std::vector<detail::GpuResult> results = collect(reader, now, kind, stats, details_read);
  stats.stale_gpus.clear();
  std::size_t next = 0;  // results are in GPU order
  for (unsigned gpu = 0; gpu < device_count_; ++gpu) {
    if (next < results.size() && results[next].gpu == gpu) {
      publish_gpu(results[next++], tick, snapshots, stats);
      continue;
    }
    // Not read this tick: inside a call that has not returned (stale), or not reached because
    // another GPU's call held the reader (left out of the tick, as a GPU not due is).
    if (hung_on_[gpu] < 0) continue;
    const std::optional<detail::ReaderBusy> busy =
        readers_[static_cast<std::size_t>(hung_on_[gpu])].reader->busy();
    if (!busy) continue;  // returned just now: booked next tick
    DeviceSample s;
    s.index = gpu;
    s.wall_time = tick.wall_time;
    s.mono_time = now;
    set_all_missing(s, Missing::kStale);
    s.stale =
        StaleCall{busy->call != nullptr ? busy->call : tasks_[busy->task].task.name, busy->since};
    const MonoClock::duration age = std::max(clock_->now() - busy->since, MonoClock::duration(0));
    stats.stale_gpus.push_back({gpu, s.stale->call, to_us(age) / 1e6});
    tick.gpus.push_back(std::move(s));
  }
  stats.lost_gpus.clear();
  for (unsigned gpu = 0; gpu < device_count_; ++gpu) {
    if (lost_[gpu]) stats.lost_gpus.push_back(gpu);
  }
  if (details_read) {
    // A GPU's static facts change only inside its own calls: skip those still inside one.
    std::vector<DeviceStatic> devices = this->devices();
    for (unsigned i = 0; i < device_count_; ++i) {
      if (hung_on_[i] < 0) devices[i] = backend_->device(i);
    }
    std::lock_guard lock(mutex_);
    devices_ = std::move(devices);
  }
  for_each_sink(stats, [&](SampleSink& s) { s.on_tick(tick); });
  spare_ = history_.push(std::move(tick));
  if (!snapshots.empty()) publish_processes(snapshots, stats);
  return true;
}

std::size_t Sampler::idle_reader() {
  for (std::size_t i = 0; i < readers_.size(); ++i) {
    if (readers_[i].hung_gpu < 0 && readers_[i].reader->idle()) return i;
  }
  readers_.push_back({std::make_unique<detail::GpuReader>(backend_, functions_, clock_), -1});
  return readers_.size() - 1;
}

std::vector<detail::GpuResult> Sampler::collect(Reader& r, MonoClock::time_point now, TickKind kind,
                                                SamplerStats& stats, bool& details_read) {
  std::vector<detail::GpuResult> results = r.reader->take();
  if (!r.reader->idle()) {
    // Inside a call past the deadline: the reader stays with that GPU until the call returns,
    // and reads nothing more.
    r.reader->cancel();
    if (const std::optional<detail::ReaderBusy> busy = r.reader->busy()) {
      r.hung_gpu = static_cast<int>(busy->gpu);
      hung_on_[busy->gpu] = static_cast<int>(&r - readers_.data());
    }
    for (detail::GpuResult& g : r.reader->take()) results.push_back(std::move(g));
  }
  for (const detail::GpuResult& g : results) {
    details_read = account(g, now, kind, stats, /*late=*/false) || details_read;
  }
  return results;
}

void Sampler::publish_gpu(detail::GpuResult& result, TickSample& tick,
                          std::vector<ProcessSnapshot>& snapshots, SamplerStats& stats) {
  const unsigned gpu = result.gpu;
  GpuTickOutput& out = result.out;
  stats.nvml_errors += count_errors(out.sample);
  if (out.processes) {
    if (!*out.processes) {
      if (out.processes->why() == Missing::kError) ++stats.nvml_errors;
    } else {
      snapshots.push_back({gpu, tick.wall_time, out.processes->value()});
      for (GpuProcess& p : snapshots.back().processes) p.gpu_index = gpu;
    }
  }
  if (static_cast<bool>(lost_[gpu]) != out.sample.lost) {
    lost_[gpu] = out.sample.lost;
    emit({gpu, out.sample.lost ? GpuEvent::Kind::kLost : GpuEvent::Kind::kRecovered, 0,
          tick.wall_time, tick.mono_time},
         stats);
  }
  tick.gpus.push_back(std::move(out.sample));
}

void Sampler::wait_for(const std::shared_ptr<detail::TickLatch>& latch,
                       MonoClock::time_point deadline, TickKind kind) {
  if (kind == TickKind::kScheduled) {
    {
      std::lock_guard lock(wake_mutex_);
      waiting_ = latch;
    }
    if (stop_.requested()) latch->interrupt();  // stop() came before waiting_ was set
  }
  clock_->wait_for_readers(deadline, latch->done());
  std::lock_guard lock(wake_mutex_);
  waiting_.reset();
}

bool Sampler::is_due(const TaskState& task, std::size_t index, unsigned gpu,
                     MonoClock::time_point now, TickKind kind) const {
  if (kind == TickKind::kFinal) return index == 0 || task.task.edges;  // metrics and counters
  if (task.task.once) return !task.done[gpu];
  if (task.task.edges && task.edge_due[gpu]) return true;
  return now >= task.next_due[gpu];
}

bool Sampler::account(const detail::GpuResult& result, MonoClock::time_point now, TickKind kind,
                      SamplerStats& stats, bool late) {
  const unsigned gpu = result.gpu;
  bool once_ran = false;
  for (const detail::TaskRun& run : result.runs) {
    TaskState& task = tasks_[run.task];
    task.stats.max_cost_us = std::max(task.stats.max_cost_us, run.cost_us);
    if (late) {
      // A hang, not what the call costs: kept out of the mean that paces the task (a 60 s hang
      // would stretch its period for every GPU).
      ++task.stats.late;
    } else {
      ++task.stats.runs;
      task.total_cost_us += run.cost_us;
    }
    if (!run.ok) {
      ++task.stats.exceptions;
      ++stats.exceptions;
    }
    if (kind == TickKind::kFinal) continue;
    if (task.task.edges) task.edge_due[gpu] = 0;  // read (or failed): not retried every tick
    if (task.task.once) {
      task.done[gpu] = run.ok && !run.lost;
      once_ran = once_ran || run.ok;
    } else if (task.period.count() > 0) {
      update_period(task);  // the cost just measured may stretch it
      while (task.next_due[gpu] <= now) task.next_due[gpu] += task.period;
    }
  }
  return once_ran;
}

void Sampler::update_period(TaskState& task) {
  // Bounded rate: stretch the period so that one round over every GPU costs at most
  // slow_task_cpu_share of the period (measured mean once known, else the estimate).
  const double cost_us = task.stats.runs ? task.total_cost_us / static_cast<double>(task.stats.runs)
                                         : static_cast<double>(task.task.estimated_cost.count());
  const auto floor = std::chrono::duration<double, std::micro>(cost_us * device_count_ /
                                                               config_.slow_task_cpu_share);
  const auto wanted = MonoClock::duration(std::max(task.task.period, config_.interval));
  const auto stretched = duration_cast<MonoClock::duration>(floor);
  task.period = std::max(wanted, stretched);
}

void Sampler::publish_processes(std::vector<ProcessSnapshot>& snapshots, SamplerStats& stats) {
  if (host_) {
    std::vector<unsigned> pids;
    for (const ProcessSnapshot& s : snapshots) {
      for (const GpuProcess& p : s.processes) pids.push_back(p.pid);
    }
    const MonoClock::time_point before = clock_->now();
    try {
      std::vector<host::HostProcessInfo> infos = host_->inspector().inspect(pids, before);
      std::size_t k = 0;
      for (ProcessSnapshot& s : snapshots) {
        for (GpuProcess& p : s.processes) {
          const host::HostProcessInfo& h = infos.at(k++);
          p.user = h.user;
          p.command_line = h.command_line;
          p.cpu_percent = h.cpu_percent;
          p.host_memory_rss_bytes = h.rss_bytes;
          p.job = h.job;
        }
      }
    } catch (...) {
      ++host_stats_.exceptions;
      ++stats.exceptions;
    }
    const double cost = to_us(clock_->now() - before);
    ++host_stats_.runs;
    host_total_us_ += cost;
    host_stats_.max_cost_us = std::max(host_stats_.max_cost_us, cost);
    host_stats_.mean_cost_us = host_total_us_ / static_cast<double>(host_stats_.runs);
  }
  for (const ProcessSnapshot& s : snapshots) {
    for_each_sink(stats, [&](SampleSink& sink) { sink.on_processes(s); });
  }
  std::lock_guard lock(mutex_);
  for (ProcessSnapshot& s : snapshots) {
    if (processes_.size() < device_count_) processes_.resize(device_count_);
    processes_[s.gpu] = std::move(s);
  }
}

void Sampler::emit(const GpuEvent& event, SamplerStats& stats) {
  (void)events_.push(event);
  for_each_sink(stats, [&](SampleSink& s) { s.on_event(event); });
}

void Sampler::queue_event(const GpuEvent& event) {
  std::lock_guard lock(queue_mutex_);
  // Bounded: a driver in an XID storm cannot grow memory between two ticks.
  if (queued_events_.size() >= config_.event_capacity) {
    ++queue_dropped_;
    return;
  }
  queued_events_.push_back(event);
}

void Sampler::deliver_queued_events(SamplerStats& stats) {
  std::vector<GpuEvent> events;
  {
    std::lock_guard lock(queue_mutex_);
    events.swap(queued_events_);
    stats.events_dropped = queue_dropped_;
  }
  for (const GpuEvent& e : events) {
    // The stream also notices lost GPUs when it re-registers them; the ticks already report
    // each transition once (kLost / kRecovered), so the stream's copies are dropped here.
    if (e.kind == GpuEvent::Kind::kLost || e.kind == GpuEvent::Kind::kRecovered) continue;
    if (e.gpu >= device_count_) continue;
    ++stats.events_received;
    emit(e, stats);
  }
}

template <typename Fn>
void Sampler::for_each_sink(SamplerStats& stats, Fn&& fn) {
  for (const auto& sink : sinks_) {
    try {
      fn(*sink);
    } catch (...) {
      ++stats.sink_errors;
    }
  }
}

}  // namespace gpumon
