// SPDX-License-Identifier: MIT
// gpumon's C++ client (docs/cpp-client.md): what a C++ training loop (libtorch or anything else)
// uses to send its steps to the node's gpumon agent, over the protocol the Python package speaks
// (docs/python.md, "Protocol"). It depends on the C++ standard library only (no libtorch): the
// caller passes what it reads from its framework (allocator stats, GPU step time).
//
//   auto mon = gpumon::Monitor::start();          // attach to (or start) the node's agent
//   for (...) {
//     auto batch = mon.fetch([&] { return loader.next(); });  // data wait
//     { auto s = mon.scoped_step(); train(batch); }            // or: train(batch); mon.step();
//   }
//   mon.close();                                   // also done by the destructor
//
// Contract:
// - Nothing throws: every member is noexcept (fetch() passes on only what the caller's function
//   throws). An error inside gpumon becomes one "gpumon: ..." line (stderr by default), once per
//   kind of problem, and the monitor becomes inactive (a no-op).
// - Nothing blocks on the agent: a step is queued (bounded) and written without waiting; an
//   absent or dead agent is retried with exponential backoff from within later calls.
// - Fork-safe: in a forked child every call does nothing and the inherited socket is closed.
// - No thread and no signal handler is started.
// - Thread-safety: a Monitor is used by one thread at a time (the training loop's).
// Times: wall clock for a step's start and end (seconds since the Unix epoch), a monotonic clock
// for its durations (seconds).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace gpumon {

/// The caching allocator's counters at one moment; every field is optional (null on the wire).
/// With libtorch: c10::cuda::CUDACachingAllocator::getDeviceStats(device), "all" pool
/// (examples/cpp/train_libtorch.cc shows the mapping).
struct AllocatorStats {
  std::optional<std::int64_t> allocated_bytes;       ///< allocated_bytes[all].current
  std::optional<std::int64_t> reserved_bytes;        ///< reserved_bytes[all].current
  std::optional<std::int64_t> active_bytes;          ///< active_bytes[all].current
  std::optional<std::int64_t> inactive_split_bytes;  ///< inactive_split_bytes[all].current
  std::optional<std::int64_t> allocated_peak_bytes;  ///< allocated_bytes[all].peak
  std::optional<std::int64_t> reserved_peak_bytes;   ///< reserved_bytes[all].peak
  std::optional<std::int64_t> num_alloc_retries;
  std::optional<std::int64_t> num_ooms;
};

/// Times steps on the GPU with events recorded in the training's stream (with CUDA: cudaEvent_t
/// created with cudaEventDefault, cudaEventRecord on the current stream, cudaEventQuery, then
/// cudaEventElapsedTime; docs/cpp-client.md shows one). The Monitor records at most one step's
/// pair per gpu_interval_s and reads it at the next step; what a method throws disables the
/// Monitor with one warning.
class GpuTimer {
 public:
  virtual ~GpuTimer() = default;
  /// Records an event now (in stream order); returns its id. An id may be reused once both
  /// steps that used it were read: at most 3 events are in use at a time (a ring of 8 is safe).
  virtual int record() = 0;
  /// The seconds from event `from` to event `to` when the GPU has passed `to`, else nullopt
  /// (never waits for the GPU).
  virtual std::optional<double> elapsed(int from, int to) = 0;
};

struct MonitorOptions {
  /// Empty: $GPUMON_AGENT_SOCKET (set by `gpumon record -- CMD`), else the agent's default
  /// socket ($XDG_RUNTIME_DIR/gpumon/agent.sock or /tmp/gpumon-UID/agent.sock).
  std::string socket_path;
  /// Only when no socket was given (here or in the environment) and nothing listens on the
  /// default one: start `gpumon agent` ($GPUMON_BINARY when set, else gpumon on PATH) in its
  /// own session; it exits $GPUMON_AGENT_IDLE_EXIT_S (30) seconds after its last client.
  bool start_agent = true;
  /// Recording for an agent started here (empty: $GPUMON_RECORD; none: it only counts steps).
  std::string record;
  /// Sent in the hello (null when empty): "cuda:0", "cpu"; the torch version, e.g. "1.13.1".
  std::string device;
  std::string torch_version;
  /// The device's PCI bus id ("0000:18:00.0", cudaDeviceGetPCIBusId) or UUID ("GPU-...",
  /// cudaGetDeviceProperties' uuid): either lets the agent tell which GPU this process runs on
  /// when several are visible (without them it relies on CUDA_DEVICE_ORDER=PCI_BUS_ID or
  /// NVML's process list). CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER are sent as set.
  std::string pci_bus_id;
  std::string device_uuid;
  /// allocator_source is called at most once per this interval, at a step's end (seconds).
  double allocator_interval_s = 1.0;
  /// Optional: reads the allocator's stats (from the training thread, at a step's end).
  std::function<AllocatorStats()> allocator_source;
  /// Optional: the GPU time of at most one step per gpu_interval_s (the others carry null),
  /// instead of set_gpu_step_seconds().
  std::shared_ptr<GpuTimer> gpu_timer;
  double gpu_interval_s = 1.0;
  /// Where the warnings go (one line each, without '\n'); default: stderr.
  std::function<void(std::string_view)> on_warning;
  std::size_t max_queue_bytes = 256 * 1024;    ///< steps kept while the agent is away
  std::chrono::milliseconds min_backoff{100};  ///< reconnection delay, doubling up to max
  std::chrono::milliseconds max_backoff{5000};
  /// Steps are handed to the client and written to the socket at most this often, or sooner
  /// once 512 wait (they wait in the step clock meanwhile, unformatted), so most steps cost
  /// neither a message nor a system call; oom() and close() write the rest. 0: every step
  /// writes. The default is the Python client's too (docs/PERFORMANCE.md, "The hand-over's
  /// interval").
  std::chrono::milliseconds write_interval{1000};
};

/// The client's counters.
struct MonitorStats {
  std::uint64_t steps = 0;  ///< steps emitted
  std::uint64_t sent = 0;   ///< messages written to the socket
  std::uint64_t dropped = 0;
  std::uint64_t connects = 0;
  std::uint64_t disconnects = 0;
  bool connected = false;
};

class Monitor {
 public:
  /// Attaches to the node's agent (see MonitorOptions); an inactive Monitor when there is none.
  static Monitor start(MonitorOptions options = {}) noexcept;

  Monitor() noexcept;  ///< inactive
  ~Monitor();          ///< close()
  Monitor(Monitor&&) noexcept;
  Monitor& operator=(Monitor&&) noexcept;
  Monitor(const Monitor&) = delete;
  Monitor& operator=(const Monitor&) = delete;

  /// False without an agent, after an internal error, after close() and in a forked child.
  bool active() const noexcept;
  const std::string& socket_path() const noexcept;

  /// Marks a step boundary: the step since the previous boundary (or start()) ends now.
  void step() noexcept;

  /// What scoped_step() returns: times the body of a step, from its creation to its end.
  class [[nodiscard]] ScopedStep {
   public:
    ~ScopedStep() { end(); }
    ScopedStep(ScopedStep&& o) noexcept : mon_(std::exchange(o.mon_, nullptr)) {}
    ScopedStep(const ScopedStep&) = delete;
    ScopedStep& operator=(const ScopedStep&) = delete;
    ScopedStep& operator=(ScopedStep&&) = delete;
    /// Ends the step now (idempotent; the destructor calls it).
    void end() noexcept;

   private:
    friend class Monitor;
    explicit ScopedStep(Monitor* mon) noexcept : mon_(mon) {}
    Monitor* mon_;
  };
  /// Starts a step whose time is its body's (what ran between the previous step and this one,
  /// except the data wait, is not counted).
  ScopedStep scoped_step() noexcept;

  /// Time blocked waiting for data, counted in the current step (a begin without an end is
  /// ignored; a second begin restarts the wait).
  void data_wait_begin() noexcept;
  void data_wait_end() noexcept;
  /// Calls `next()` (the caller's data loader) between data_wait_begin() and data_wait_end() and
  /// returns what it returns; what it throws passes through (the wait still ends).
  template <typename F>
  decltype(auto) fetch(F&& next) {
    struct End {
      Monitor* m;
      ~End() { m->data_wait_end(); }
    };
    data_wait_begin();
    End end{this};
    return std::forward<F>(next)();
  }
  /// The start of an epoch: when nothing was fetched since the last step, the next step starts
  /// now (the time between epochs is not a step).
  void begin_epoch() noexcept;

  /// Sent with the next step: the allocator's stats (instead of allocator_source's) and the
  /// step's GPU time in seconds (e.g. from two CUDA events; the agent stores null without it).
  void set_allocator_stats(const AllocatorStats& stats) noexcept;
  void set_gpu_step_seconds(double seconds) noexcept;
  /// True when allocator_interval_s has passed since the last stats were sent (for callers
  /// that read the stats themselves and want the bounded rate).
  bool allocator_stats_due() const noexcept;

  /// Reports a CUDA out-of-memory error of `requested_bytes` (0: unknown) in the current step.
  void oom(std::int64_t requested_bytes) noexcept;

  /// Sends a bye, waits up to `timeout` for the queue to drain and disconnects. Idempotent.
  void close(std::chrono::milliseconds timeout = std::chrono::seconds(1)) noexcept;

  MonitorStats stats() const noexcept;

  struct State;  // defined in src/client/monitor.cc

 private:
  void end_scoped() noexcept;
  std::unique_ptr<State> state_;
};

inline void Monitor::ScopedStep::end() noexcept {
  if (mon_ != nullptr) std::exchange(mon_, nullptr)->end_scoped();
}

}  // namespace gpumon
