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
#include "agent/socket_path.h"
#include "client/agent_launcher.h"
#include "client/hand_over_schedule.h"
#include "client/messages.h"
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

std::optional<std::string> host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return std::nullopt;
  return std::string(buf);
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
    const char* from_env = std::getenv("GPUMON_AGENT_SOCKET");
    const bool given = !s.options.socket_path.empty() || (from_env && *from_env);
    s.socket_path = !s.options.socket_path.empty() ? s.options.socket_path
                    : given                        ? std::string(from_env)
                                                   : agent::default_socket_path();
    if (!given && !client::is_listening(s.socket_path)) {
      auto binary = s.options.start_agent ? client::find_gpumon_binary() : std::nullopt;
      if (!binary) {
        s.warn("no-agent", "no agent listens on " + s.socket_path +
                               (s.options.start_agent
                                    ? " and no gpumon binary was found (set GPUMON_BINARY or PATH, "
                                      "or run `gpumon agent`)"
                                    : " (start_agent is off; run `gpumon agent`)") +
                               "; gpumon does nothing");
        return mon;
      }
      std::string record = s.options.record;
      if (record.empty()) {
        const char* r = std::getenv("GPUMON_RECORD");
        record = r ? r : "";
      }
      const std::string why = client::start_agent_once(*binary, s.socket_path, record);
      if (!why.empty()) {
        s.warn("agent-start", *binary + " agent did not start on " + s.socket_path + ": " + why +
                                  "; gpumon does nothing");
        return mon;
      }
    }
    agent::AgentClientOptions co;
    co.socket_path = s.socket_path;
    co.max_queue_bytes = s.options.max_queue_bytes;
    co.min_backoff = s.options.min_backoff;
    co.max_backoff = s.options.max_backoff;
    co.write_interval = s.options.write_interval;
    s.client = std::make_unique<agent::AgentClient>(co);
    client::HelloFields h;
    h.pid = ::getpid();
    h.rank = client::env_int("RANK");
    h.local_rank = client::env_int("LOCAL_RANK");
    h.world_size = client::env_int("WORLD_SIZE");
    h.hostname = host_name();
    h.torch_version = non_empty(s.options.torch_version);
    h.device = non_empty(s.options.device);
    s.client->set_hello(client::hello_message(h));
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
    state_->send_steps(
        client::oom_message(state_->clock->steps(),
                            requested_bytes > 0 ? std::optional(requested_bytes) : std::nullopt));
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
