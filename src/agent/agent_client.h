// SPDX-License-Identifier: MIT
// AgentClient: what a training process uses to talk to the agent (the Python module `_gpumon`
// wraps it). It never blocks and never throws: send() appends one line to a bounded queue and,
// at most every write_interval, writes what the socket takes (MSG_DONTWAIT); a full queue drops
// the new message and counts it. A dead or absent agent is retried with exponential backoff
// (min_backoff doubling to max_backoff) from within send(); each new connection starts with the
// hello set by set_hello(). A message cut by a broken connection is dropped (the agent discards
// partial lines), the rest of the queue goes to the next connection.
//
// Fork safety: it has no thread. A pthread_atfork handler bumps a fork generation and closes the
// inherited socket in every forked child (a DataLoader worker), so workers do not keep the
// connection open; a client made before the fork sees the new generation (no getpid() system
// call per message) and there every call does nothing and returns false.
// No signal handler is installed (SIGPIPE is avoided with MSG_NOSIGNAL).
//
// The agent talks back with whole lines (its live findings, docs/python.md "Protocol"): send()
// and flush() read what has arrived, without blocking and at most every kReceiveInterval, into a
// bounded buffer (kMaxReceiveBytes; a longer line is skipped) and keep the latest findings line.
// The findings are cleared (and findings_seq() bumped) when the connection breaks.
//
// Thread-safety: every member may be called from any thread (one mutex).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

namespace gpumon::agent {

struct AgentClientOptions {
  std::string socket_path;
  std::size_t max_queue_bytes = 256 * 1024;  ///< unsent messages kept while the agent is away
  std::chrono::milliseconds min_backoff{100};
  std::chrono::milliseconds max_backoff{5000};
  /// send() writes to the socket at most this often, or once write_batch_bytes are queued: a
  /// step's message waits in the queue up to this long, so most steps cost no system call
  /// (on the H200 host one send() to the agent cost ~15 us of a step's CPU). flush() and
  /// close() write at once. 0: every send() writes.
  std::chrono::milliseconds write_interval{200};
  std::size_t write_batch_bytes = 16 * 1024;
};

struct AgentClientStats {
  std::uint64_t sent = 0;         ///< messages written completely to the socket
  std::uint64_t dropped = 0;      ///< queue full, cut by a broken connection, or too long
  std::uint64_t connects = 0;     ///< successful connections
  std::uint64_t disconnects = 0;  ///< connections that broke (agent gone)
  std::uint64_t queued_bytes = 0;
  bool connected = false;
  std::string last_error;  ///< why the last connection attempt or write failed
};

/// How often send()/flush() look for lines from the agent, and how much they buffer.
inline constexpr std::chrono::milliseconds kReceiveInterval{100};
inline constexpr std::size_t kMaxReceiveBytes = 64 * 1024;

/// The process's fork generation: bumped in every forked child (pthread_atfork, installed by
/// the first call). Both clients compare it with the value they were made with to know they
/// are in a forked child (a DataLoader worker) without a getpid() system call per step. One
/// relaxed load once installed.
std::uint64_t fork_generation();

class AgentClient {
 public:
  explicit AgentClient(AgentClientOptions options);
  ~AgentClient();  ///< closes the socket (in the creating process only); sends nothing more
  AgentClient(const AgentClient&) = delete;
  AgentClient& operator=(const AgentClient&) = delete;

  /// The first line of every connection (a hello message, agent_protocol.h).
  void set_hello(std::string_view line);
  /// Queues `line` (a '\n' is added) and, when write_interval has passed, writes what the
  /// socket takes now. False when the message was dropped: queue full, longer than the
  /// protocol allows, or not the owner process.
  bool send(std::string_view line);
  /// Queues `line` like send() but neither writes nor reads: a batch of messages queued this
  /// way goes out with the next flush() in one system call.
  bool enqueue(std::string_view line);
  /// Tries to connect (when due) and write the queue, without blocking; true when it is empty.
  bool flush();
  /// Waits up to `timeout` for the queue to drain (for the end of a run), then closes.
  void close(std::chrono::milliseconds timeout);
  AgentClientStats stats() const;
  /// stats().disconnects without the lock and the copy (checked after every step).
  std::uint64_t disconnects() const { return disconnects_.load(std::memory_order_relaxed); }
  /// False in a forked child: the client is inert there.
  bool in_owner_process() const;
  /// Reads what the agent sent now (not waiting for kReceiveInterval); never blocks.
  void receive();
  /// Bumped each time the latest findings line changes (lock-free: checked after every step).
  std::uint64_t findings_seq() const { return findings_seq_.load(std::memory_order_relaxed); }
  /// The latest `{"type":"findings",...}` line from the agent (no newline); empty when none.
  std::string findings_line() const;

 private:
  bool connect_locked();
  bool enqueue_locked(std::string_view line);
  void write_locked();
  void disconnect_locked(const std::string& why, bool broken);
  void receive_locked(bool now);

  const AgentClientOptions options_;
  std::uint64_t owner_generation_ = 0;  // fork generation it was made in (see the .cc)
  mutable std::mutex mu_;
  int fd_ = -1;
  int registry_slot_ = -1;
  std::string hello_;
  std::string queue_;        // whole '\n'-terminated messages; queue_[0..written_) already sent
  std::size_t written_ = 0;  // bytes of queue_ already written
  bool closed_ = false;
  std::chrono::steady_clock::time_point next_attempt_{};
  std::chrono::milliseconds backoff_;
  AgentClientStats stats_;
  std::atomic<std::uint64_t> disconnects_{0};  // mirrors stats_.disconnects
  std::string in_;                             // bytes from the agent after the last complete line
  bool skipping_line_ = false;  // the current line outgrew kMaxReceiveBytes: drop to its end
  std::chrono::steady_clock::time_point next_receive_{};
  std::chrono::steady_clock::time_point next_write_{};  // send() writes when due
  std::string findings_;
  std::atomic<std::uint64_t> findings_seq_{0};
};

}  // namespace gpumon::agent
