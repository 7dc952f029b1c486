// SPDX-License-Identifier: MIT
// AgentServer: the agent's Unix socket. One thread accepts clients (training ranks, up to
// max_clients), reads their newline-delimited messages (training/protocol.h) and hands steps and
// rank events to the sinks. It reads every client each read_interval rather than waiting on
// their sockets, so a client's write wakes no one: waking a sleeping reader costs the writer, a
// training process, tens of microseconds (docs/PERFORMANCE.md "The hand-over"). A client's
// hello and its hang-up are read at once, and a client with more than one read holds is read
// on without waiting for the clock. A client that sends something malformed, too long, or a message
// before its hello is dropped (its connection closed, counted); the server and the other
// clients carry on. A client that dies mid-message loses only that partial message.
//
// The agent also talks back: push() sends one line (live findings, docs/python.md "Protocol")
// to every client that said hello, and the latest pushed line to each client right after its
// hello. Writes never block the server: a client that does not read keeps at most
// kMaxPushBacklog bytes queued and loses the updates beyond that (counted in push_dropped).
//
// Thread-safety: the sinks are called on the server's thread, one call at a time, and must
// return quickly (training::StepSink). stats(), push() and stop() from any
// thread.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "training/training_types.h"

namespace gpumon::agent {

struct AgentServerOptions {
  std::string socket_path;        ///< prepared with prepare_listen_path()
  std::size_t max_clients = 256;  ///< more are accepted and closed at once (counted)
  /// Clients are read this often (a client that sent more than one read takes is read again
  /// at once); their messages reach the sinks at most this late.
  std::chrono::milliseconds read_interval{50};
};

struct AgentSinks {
  std::shared_ptr<training::StepSink> steps;  ///< may be null: the steps are only counted
  /// One line per dropped client ("client pid 12: message longer than 4095 bytes").
  std::function<void(const std::string&)> on_warning;
};

struct AgentServerStats {
  std::uint64_t clients_accepted = 0;
  std::uint64_t clients_refused = 0;  ///< over max_clients
  std::uint64_t clients_dropped = 0;  ///< closed by us for bad input
  std::uint64_t clients_now = 0;
  std::uint64_t messages = 0;  ///< accepted messages, every type
  std::uint64_t steps = 0;
  std::uint64_t unknown = 0;           ///< messages of a type this agent does not know (ignored)
  std::uint64_t partial_at_close = 0;  ///< clients that closed in the middle of a message
  std::string last_error;              ///< why the last client was dropped
  std::uint64_t pushed = 0;            ///< pushed lines written to a client's queue
  std::uint64_t push_dropped = 0;      ///< lost: that client's queue was over kMaxPushBacklog
};

/// Bytes of pushed lines kept for a client whose socket is full.
inline constexpr std::size_t kMaxPushBacklog = 64 * 1024;

class AgentServer {
 public:
  /// Binds and listens on options.socket_path (made 0600) and starts the thread; nullptr and
  /// `error` when it cannot (run prepare_listen_path() first).
  static std::unique_ptr<AgentServer> start(const AgentServerOptions& options, AgentSinks sinks,
                                            std::string& error);
  ~AgentServer();  ///< stops
  AgentServer(const AgentServer&) = delete;
  AgentServer& operator=(const AgentServer&) = delete;

  /// Closes every client (each hello'd one without a bye gets a "disconnect" event; one we
  /// dropped for bad input gets "dropped" with {"reason": ...} instead), the listening socket,
  /// removes the socket file unless another server has bound that path since, and joins.
  /// Idempotent.
  void stop();
  /// Sends `line` (no newline; one is added) to every hello'd client, and to later ones after
  /// their hello; replaces the previously pushed line. Never blocks.
  void push(std::string line);
  const std::string& socket_path() const { return options_.socket_path; }
  AgentServerStats stats() const;
  /// Seconds since the last client left (0 while one is connected or none ever came).
  double idle_seconds() const;

 private:
  struct Client;
  AgentServer(const AgentServerOptions& options, AgentSinks sinks, int listen_fd, int wake_fd);
  void run() noexcept;
  void accept_pending(std::vector<std::unique_ptr<Client>>& clients);
  /// False when the client is done (closed or dropped).
  bool read_client(Client& c);
  bool handle_line(Client& c, std::string_view line);
  void drop(Client& c, const std::string& why);
  void finish_client(Client& c);
  /// Queues the latest pushed line if `c` has not had it, and writes what the socket takes. A
  /// broken connection only stops the writes: the read side reads what is left, to EOF.
  void write_client(Client& c);

  AgentServerOptions options_;
  AgentSinks sinks_;
  int listen_fd_ = -1;
  dev_t bound_dev_ = 0;  // the socket file we bound, which stop() removes while it is still ours
  ino_t bound_ino_ = 0;
  int wake_fd_ = -1;  // eventfd: stop() wakes poll()
  std::thread thread_;
  std::mutex stop_mutex_;
  std::atomic<bool> stopping_{false};
  mutable std::mutex stats_mutex_;
  AgentServerStats stats_;
  std::mutex push_mutex_;
  std::string push_line_;           // guarded by push_mutex_
  std::uint64_t push_seq_ = 0;      // guarded by push_mutex_; 0: nothing pushed yet
  std::int64_t idle_since_ms_ = 0;  // guarded by stats_mutex_; 0: a client is here or never came
};

}  // namespace gpumon::agent
