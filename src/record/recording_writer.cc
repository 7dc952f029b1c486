// SPDX-License-Identifier: MIT
#include "record/recording_writer.h"

#include <unistd.h>

#include "record/recording_batcher.h"
#include "record/recording_store.h"
#include "record/step_shares.h"
#include "util/host_name.h"

namespace gpumon::record {
namespace {

constexpr std::size_t kMaxQueuedRankEvents = 4096;
// One a second per process: 4 s of 1,024 processes.
constexpr std::size_t kMaxQueuedProcessSamples = 4096;

}  // namespace

std::unique_ptr<RecordingWriter> RecordingWriter::create(const RecordingOptions& options,
                                                         const RunInfo& run,
                                                         const std::vector<DeviceStatic>& devices,
                                                         std::string& error) {
  std::vector<RecordedDevice> recorded;
  for (const auto& d : devices) recorded.push_back(recorded_device(d));
  auto store = detail::RecordingStore::create(options.path, options.overwrite, run,
                                              to_unix_ms(WallClock::now()), recorded, error);
  if (!store) return nullptr;
  auto batcher = std::make_unique<detail::RecordingBatcher>(
      std::move(store), options.chunk_max_ticks, options.chunk_max_span, options.path);
  return std::unique_ptr<RecordingWriter>(new RecordingWriter(options, std::move(batcher)));
}

RecordingWriter::RecordingWriter(const RecordingOptions& options,
                                 std::unique_ptr<detail::RecordingBatcher> batcher)
    : options_(options),
      batcher_(std::move(batcher)),
      shares_(std::make_unique<detail::StepShares>(options.step_queue_capacity)) {
  thread_ = std::thread([this] { run(); });
}

RecordingWriter::~RecordingWriter() {
  close();
}

// The copies may throw std::bad_alloc; a sink must not throw into the sampler or the agent:
// count it.
template <typename Full, typename Push>
void RecordingWriter::enqueue(Full&& full, Push&& push) noexcept {
  if (stopped_.load(std::memory_order_relaxed)) {
    dropped_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  try {
    std::lock_guard lock(mu_);
    if (closing_ || full()) {
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    push();
  } catch (...) {
    dropped_.fetch_add(1, std::memory_order_relaxed);
  }
}

void RecordingWriter::on_tick(const TickSample& tick) {
  enqueue([&] { return queue_.gpu.size() >= options_.queue_capacity; },
          [&] { queue_.gpu.emplace_back(tick); });
}

void RecordingWriter::on_event(const GpuEvent& event) {
  enqueue([&] { return queue_.gpu.size() >= options_.queue_capacity; },
          [&] { queue_.gpu.emplace_back(event); });
}

void RecordingWriter::on_processes(const ProcessSnapshot& snapshot) {
  enqueue([&] { return queue_.gpu.size() >= options_.queue_capacity; },
          [&] { queue_.gpu.emplace_back(snapshot); });
}

void RecordingWriter::on_step(const training::Step& step) {
  enqueue([&] { return !shares_->admit(step); }, [&] { queue_.steps.push_back(step); });
}

// Rank events come a few per process (hello, bye, an OOM); the bound only stops a client that
// reconnects in a loop from growing the queue.
void RecordingWriter::on_rank_event(const training::RankEvent& event) {
  enqueue([&] { return queue_.rank_events.size() >= kMaxQueuedRankEvents; },
          [&] {
            queue_.rank_events.push_back(event);
            shares_->on_rank_event(event);
          });
}

void RecordingWriter::on_process_sample(const training::ProcessSample& sample) {
  enqueue([&] { return queue_.process_samples.size() >= kMaxQueuedProcessSamples; },
          [&] { queue_.process_samples.push_back(sample); });
}

void RecordingWriter::run() {
  using Clock = std::chrono::steady_clock;
  // The schedule is fixed: the time a commit takes does not push the next one later.
  auto next_commit = Clock::now() + options_.flush_interval;
  auto next_checkpoint = Clock::now() + options_.checkpoint_interval;
  std::unique_lock lock(mu_);
  for (;;) {
    wake_.wait_until(lock, next_commit, [this] { return closing_; });
    next_commit += options_.flush_interval;
    if (const auto now = Clock::now(); next_commit < now) next_commit = now;  // behind: at once
    Batch batch;
    std::swap(batch, queue_);
    shares_->on_taken();
    auto losses = shares_->take_losses(to_unix_ms(WallClock::now()), closing_);
    const bool closing = closing_;
    const auto end_meta = closing ? end_meta_ : decltype(end_meta_){};
    lock.unlock();

    batch.rank_events.insert(batch.rank_events.end(), std::make_move_iterator(losses.begin()),
                             std::make_move_iterator(losses.end()));
    std::string error;
    if (!stopped_.load()) {
      error = write_batch(batch, closing, end_meta);
    } else {
      dropped_.fetch_add(batch.size(), std::memory_order_relaxed);
    }

    // The main file alone then holds all but the last seconds: copied without its -wal file (or
    // with the WAL lost), a killed recording still opens.
    if (!closing && !stopped_.load() && Clock::now() >= next_checkpoint) {
      batcher_->checkpoint();
      next_checkpoint = Clock::now() + options_.checkpoint_interval;
    }

    lock.lock();
    if (!error.empty()) {
      error_ = std::move(error);
      stopped_.store(true);
    }
    if (closing) break;
  }
  batcher_.reset();  // closes the database, in this thread
}

std::string RecordingWriter::write_batch(
    Batch& batch, bool closing,
    const std::vector<std::pair<std::string, std::string>>& end_meta) noexcept {
  try {
    std::vector<TickSample> ticks;
    std::vector<GpuEvent> events;
    std::vector<ProcessSnapshot> snapshots;
    for (auto& item : batch.gpu) {
      if (auto* t = std::get_if<TickSample>(&item)) ticks.push_back(std::move(*t));
      if (auto* e = std::get_if<GpuEvent>(&item)) events.push_back(*e);
      if (auto* p = std::get_if<ProcessSnapshot>(&item)) snapshots.push_back(std::move(*p));
    }
    std::string error;
    if (!batch.empty())
      error = batcher_->write(ticks, events, snapshots, batch.steps, batch.rank_events,
                              batch.process_samples);
    if (error.empty() && closing) error = batcher_->finish(end_meta);
    ticks_written_.store(batcher_->ticks_committed());
    steps_written_.store(batcher_->steps_committed());
    return error;
  } catch (const std::exception& e) {
    return std::string("write error: recording stopped: ") + e.what();
  }
}

void RecordingWriter::set_end_meta(std::string key, std::string value) {
  std::lock_guard lock(mu_);
  for (auto& [k, v] : end_meta_)
    if (k == key) {
      v = std::move(value);
      return;
    }
  end_meta_.emplace_back(std::move(key), std::move(value));
}

void RecordingWriter::close() {
  {
    std::lock_guard lock(mu_);
    closing_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

RecordingStatus RecordingWriter::status() const {
  RecordingStatus s;
  s.ticks_written = ticks_written_.load();
  s.steps_written = steps_written_.load();
  s.dropped = dropped_.load();
  s.stopped = stopped_.load();
  std::lock_guard lock(mu_);
  s.error = error_;
  return s;
}

RunInfo make_run_info(const SystemInfo& system, std::string gpumon_version, std::string command) {
  RunInfo run;
  run.hostname = util::host_name();
  run.gpumon_version = std::move(gpumon_version);
  run.command = std::move(command);
  if (system.driver_version) run.driver_version = *system.driver_version;
  run.simulated_scenario = system.simulated_scenario;
  return run;
}

}  // namespace gpumon::record
