// SPDX-License-Identifier: MIT
// Monitor: the step clock over agent::AgentClient. Every public member catches what the
// internals may throw (std::bad_alloc, std::function's errors) and turns it into one warning.
#include "gpumon/monitor.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <set>

#include "agent/agent_client.h"
#include "client/client_core.h"
#include "client/hand_over_schedule.h"
#include "client/step_clock.h"

namespace gpumon {

namespace {

void write_warning(const std::function<void(std::string_view)>& sink, const std::string& text) {
  try {
    if (sink) {
      sink(text);
    } else {
      std::fprintf(stderr, "%s\n", text.c_str());
    }
  } catch (...) {  // a throwing sink must not reach the training loop
  }
}

std::optional<std::string> non_empty(const std::string& s) {
  return s.empty() ? std::nullopt : std::optional<std::string>(s);
}

}  // namespace

struct Monitor::State {
  MonitorOptions options;
  std::unique_ptr<agent::AgentClient> client;
  std::optional<client::StepClock> clock;  // set once the client is
  // Steps stay in the clock until a hand-over (every write_interval): formatting and queueing
  // each step's message as it ends would cost a cold training loop microseconds a step.
  std::optional<client::HandOverSchedule> hand_over;
  std::string socket_path;
  bool closed = false;
  std::set<std::string> warned;
  std::uint64_t disconnects = 0;

  void warn(const std::string& kind, const std::string& message) {
    if (!warned.insert(kind).second) return;
    write_warning(options.on_warning, "gpumon: " + message);
  }

  void fail(const char* what) {
    warn("internal", std::string("disabled after an internal error: ") + what);
    client.reset();
  }

  // A forked child (a DataLoader-like worker) is inert: the client's fork generation, one load
  // rather than a getpid() system call per step call.
  bool active() const { return client != nullptr && !closed && client->in_owner_process(); }

  // Hands the clock's steps, then `message` when given, to the client and writes them.
  void send_steps(std::string_view message = {}) {
    clock->drain([this](const std::string& line) { client->enqueue(line); });
    if (!message.empty()) client->enqueue(message);
    client->flush();
    const std::uint64_t d = client->disconnects();
    if (d != disconnects) {
      disconnects = d;
      warn("agent-lost", "lost the agent at " + socket_path + " (" + client->stats().last_error +
                             "); training goes on, steps are queued (bounded) and sent if it "
                             "comes back");
    }
  }

  void send_steps_if_due() {
    if (hand_over->due(*clock)) send_steps();
  }
};

#define GPUMON_GUARDED(body)           \
  try {                                \
    body                               \
  } catch (const std::exception& e) {  \
    state_->fail(e.what());            \
  } catch (...) {                      \
    state_->fail("unknown exception"); \
  }

Monitor Monitor::start(MonitorOptions options) noexcept {
  Monitor mon;
  try {
    mon.state_ = std::make_unique<State>();
    State& s = *mon.state_;
    s.options = std::move(options);
    const client::AgentAttach attach =
        client::attach_agent({s.options.socket_path, s.options.start_agent, s.options.record, ""});
    s.socket_path = attach.socket_path;
    if (!attach.usable()) {
      s.warn(attach.warning_kind, attach.warning);
      return mon;
    }
    agent::AgentClientOptions co;
    co.socket_path = s.socket_path;
    co.max_queue_bytes = s.options.max_queue_bytes;
    co.min_backoff = s.options.min_backoff;
    co.max_backoff = s.options.max_backoff;
    co.write_interval = s.options.write_interval;
    s.client = std::make_unique<agent::AgentClient>(co);
    s.client->set_hello(
        client::hello_line({non_empty(s.options.torch_version), non_empty(s.options.device),
                            non_empty(s.options.pci_bus_id), non_empty(s.options.device_uuid)}));
    s.client->flush();  // connects now when the agent is there; else retried with backoff
    if (const auto st = s.client->stats(); !st.connected) {
      s.warn("connect", "cannot reach the agent at " + s.socket_path + " yet (" + st.last_error +
                            "); steps are queued and retried");
    }
    client::StepClockOptions clock_options;
    clock_options.allocator_source = s.options.allocator_source;
    clock_options.allocator_interval_s = s.options.allocator_interval_s;
    clock_options.gpu_timer = s.options.gpu_timer;
    clock_options.gpu_interval_s = s.options.gpu_interval_s;
    s.clock.emplace(std::move(clock_options));  // the first step starts now
    s.hand_over.emplace(s.options.write_interval);
  } catch (const std::exception& e) {
    if (mon.state_) mon.state_->fail(e.what());
  } catch (...) {
    if (mon.state_) mon.state_->fail("unknown exception");
  }
  return mon;
}

Monitor::Monitor() noexcept = default;
Monitor::Monitor(Monitor&&) noexcept = default;
Monitor& Monitor::operator=(Monitor&& o) noexcept {
  if (this != &o) {
    close();
    state_ = std::move(o.state_);
  }
  return *this;
}
Monitor::~Monitor() {
  close();
}

bool Monitor::active() const noexcept {
  return state_ && state_->active();
}

const std::string& Monitor::socket_path() const noexcept {
  static const std::string kNone;
  return state_ ? state_->socket_path : kNone;
}

void Monitor::step() noexcept {
  if (!active()) return;
  GPUMON_GUARDED({
    state_->clock->step();
    state_->send_steps_if_due();
  })
}

Monitor::ScopedStep Monitor::scoped_step() noexcept {
  if (!active()) return ScopedStep(nullptr);
  GPUMON_GUARDED({ state_->clock->begin_scoped(); })
  return ScopedStep(this);
}

void Monitor::end_scoped() noexcept {
  if (!active()) return;
  GPUMON_GUARDED({
    if (state_->clock->end_scoped()) state_->send_steps_if_due();
  })
}

void Monitor::data_wait_begin() noexcept {
  if (!active()) return;
  GPUMON_GUARDED({ state_->clock->fetch_begin(); })
}

void Monitor::data_wait_end() noexcept {
  if (active()) state_->clock->fetch_end();
}

void Monitor::begin_epoch() noexcept {
  if (!active()) return;
  GPUMON_GUARDED({ state_->clock->begin_epoch(); })
}

void Monitor::set_allocator_stats(const AllocatorStats& stats) noexcept {
  if (active()) state_->clock->set_next_allocator_stats(stats);
}

void Monitor::set_gpu_step_seconds(double seconds) noexcept {
  if (active()) state_->clock->set_next_gpu_seconds(seconds);
}

bool Monitor::allocator_stats_due() const noexcept {
  return active() && state_->clock->allocator_stats_due();
}

void Monitor::oom(std::int64_t requested_bytes) noexcept {
  if (!active()) return;
  GPUMON_GUARDED({
    // The steps before it first, and all written now: the process may not outlive the error.
    state_->send_steps(client::oom_line(
        state_->clock->steps(), requested_bytes > 0 ? std::optional(requested_bytes) : std::nullopt,
        non_empty(state_->options.device), std::nullopt));
  })
}

void Monitor::close(std::chrono::milliseconds timeout) noexcept {
  if (!active()) return;
  state_->closed = true;
  // The step still waiting for its GPU time goes out with what it has (null if not done).
  GPUMON_GUARDED({
    state_->clock->finish();
    state_->send_steps();
  })
  if (!state_->client) return;  // finish() threw: fail() let go of the client
  GPUMON_GUARDED({
    state_->client->send(R"({"type":"bye"})");
    state_->client->close(timeout);
  })
}

MonitorStats Monitor::stats() const noexcept {
  MonitorStats out;
  if (!state_ || !state_->client) return out;
  try {
    const auto s = state_->client->stats();
    out.steps = static_cast<std::uint64_t>(state_->clock ? state_->clock->steps() : 0);
    out.sent = s.sent;
    out.dropped = s.dropped;
    out.connects = s.connects;
    out.disconnects = s.disconnects;
    out.connected = s.connected;
  } catch (...) {
  }
  return out;
}

}  // namespace gpumon
