// SPDX-License-Identifier: MIT
#include "agent/agent_client.h"

#include <pthread.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <thread>

#include "agent/socket_path.h"
#include "training/protocol.h"

namespace gpumon::agent {
namespace {

// The sockets of every live client, so that a forked child can close its copies. Slots are
// atomics: the atfork handler runs in the child where no lock may be taken. A slot holds the
// fd + 1 (0: free), so that the zero-initialised array is empty.
constexpr int kSlots = 64;
std::atomic<int> g_fds[kSlots];
// Bumped in every forked child: a client made before the fork compares it with its own copy
// instead of calling getpid() (a system call, a few microseconds of a training step on a VM).
std::atomic<std::uint64_t> g_fork_generation{0};

extern "C" void gpumon_agent_client_after_fork_child() {
  g_fork_generation.fetch_add(1, std::memory_order_relaxed);
  for (auto& s : g_fds) {
    const int slot = s.exchange(0);
    if (slot > 0) ::close(slot - 1);
  }
}

void install_atfork_once() {
  static std::once_flag once;
  std::call_once(once,
                 [] { pthread_atfork(nullptr, nullptr, gpumon_agent_client_after_fork_child); });
}

int register_fd(int fd) {
  for (int i = 0; i < kSlots; ++i) {
    int expected = 0;
    if (g_fds[i].compare_exchange_strong(expected, fd + 1)) return i;
  }
  return -1;  // more than 64 clients in one process: that one's fd is not closed in children
}

void unregister_fd(int slot) {
  if (slot >= 0) g_fds[slot].store(0);
}

// The '\n's in [p, p + n): memchr is vectorised, where std::count went byte by byte (a
// hand-over of 512 steps, ~100 KB, took ~0.57 M instructions: about half of its cost).
std::uint64_t count_lines(const char* p, std::size_t n) {
  std::uint64_t lines = 0;
  for (const char* end = p + n; (p = static_cast<const char*>(std::memchr(p, '\n', end - p))); ++p)
    ++lines;
  return lines;
}

}  // namespace

AgentClient::AgentClient(AgentClientOptions options)
    : options_(std::move(options)), backoff_(options_.min_backoff) {
  install_atfork_once();  // before reading the generation, so a fork after this bumps it
  owner_generation_ = g_fork_generation.load(std::memory_order_relaxed);
}

AgentClient::~AgentClient() {
  if (!in_owner_process()) return;  // the fd number may belong to something else here
  std::lock_guard lock(mu_);
  closed_ = true;
  disconnect_locked("closed", false);
}

std::uint64_t fork_generation() {
  install_atfork_once();
  return g_fork_generation.load(std::memory_order_relaxed);
}

bool AgentClient::in_owner_process() const {
  return g_fork_generation.load(std::memory_order_relaxed) == owner_generation_;
}

void AgentClient::set_hello(std::string_view line) {
  if (!in_owner_process()) return;
  std::lock_guard lock(mu_);
  hello_.assign(line);
  if (hello_.empty() || hello_.back() != '\n') hello_ += '\n';
}

bool AgentClient::send(std::string_view line) {
  if (!in_owner_process()) return false;
  std::lock_guard lock(mu_);
  if (closed_) return false;
  if (!enqueue_locked(line)) {
    write_locked();  // make room for the next one if the socket takes some now
    return false;
  }
  const auto now = std::chrono::steady_clock::now();
  if (now >= next_write_ || queue_.size() - written_ >= options_.write_batch_bytes) {
    next_write_ = now + options_.write_interval;
    write_locked();
  }
  receive_locked(false);
  return true;
}

bool AgentClient::enqueue(std::string_view line) {
  if (!in_owner_process()) return false;
  std::lock_guard lock(mu_);
  return !closed_ && enqueue_locked(line);
}

bool AgentClient::enqueue_locked(std::string_view line) {
  const std::size_t size = line.size() + (line.ends_with('\n') ? 0 : 1);
  if (size >= training::kMaxMessageBytes ||
      queue_.size() - written_ + size > options_.max_queue_bytes) {
    ++stats_.dropped;
    return false;
  }
  queue_.append(line);
  if (!line.ends_with('\n')) queue_ += '\n';
  return true;
}

bool AgentClient::flush() {
  if (!in_owner_process()) return false;
  std::lock_guard lock(mu_);
  if (!closed_) write_locked(), receive_locked(false);
  return queue_.size() == written_;
}

void AgentClient::receive() {
  if (!in_owner_process()) return;
  std::lock_guard lock(mu_);
  if (!closed_) receive_locked(true);
}

std::string AgentClient::findings_line() const {
  std::lock_guard lock(mu_);
  return findings_;
}

void AgentClient::receive_locked(bool now) {
  if (fd_ < 0) return;
  const auto t = std::chrono::steady_clock::now();
  if (!now && t < next_receive_) return;
  next_receive_ = t + kReceiveInterval;
  char chunk[8192];
  for (int reads = 0; reads < 16; ++reads) {  // at most 128 KiB per call
    const ssize_t n = ::recv(fd_, chunk, sizeof chunk, MSG_DONTWAIT);
    if (n == 0) {
      disconnect_locked("the agent closed the connection", true);
      return;
    }
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK)
        disconnect_locked(std::string("read: ") + std::strerror(errno), true);
      return;
    }
    in_.append(chunk, static_cast<std::size_t>(n));
    std::size_t start = 0;
    for (std::size_t nl; (nl = in_.find('\n', start)) != std::string::npos; start = nl + 1) {
      const std::string_view line = std::string_view(in_).substr(start, nl - start);
      if (skipping_line_) {
        skipping_line_ = false;
      } else if (line.starts_with(R"({"type":"findings")") && line != findings_) {
        findings_.assign(line);
        findings_seq_.fetch_add(1, std::memory_order_relaxed);
      }
    }
    in_.erase(0, start);
    if (in_.size() > kMaxReceiveBytes) in_.clear(), skipping_line_ = true;
    if (static_cast<std::size_t>(n) < sizeof chunk) return;
  }
}

void AgentClient::close(std::chrono::milliseconds timeout) {
  if (!in_owner_process()) return;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    {
      std::lock_guard lock(mu_);
      if (closed_) return;
      write_locked();
      if (queue_.size() == written_ || fd_ < 0 || std::chrono::steady_clock::now() >= deadline) {
        closed_ = true;
        stats_.dropped += count_lines(queue_.data() + written_, queue_.size() - written_);
        disconnect_locked("closed", false);
        queue_.clear();
        written_ = 0;
        return;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

AgentClientStats AgentClient::stats() const {
  std::lock_guard lock(mu_);
  AgentClientStats s = stats_;
  s.connected = fd_ >= 0;
  s.queued_bytes = queue_.size() - written_;
  return s;
}

bool AgentClient::connect_locked() {
  const auto now = std::chrono::steady_clock::now();
  if (now < next_attempt_) return false;
  auto fail = [&](std::string why) {
    stats_.last_error = std::move(why);
    next_attempt_ = now + backoff_;
    backoff_ = std::min(backoff_ * 2, options_.max_backoff);
    return false;
  };
  if (auto e = check_owned_socket(options_.socket_path); !e.empty()) return fail(e);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return fail(std::string("socket: ") + std::strerror(errno));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, options_.socket_path.c_str(), options_.socket_path.size());
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    const int err = errno;
    ::close(fd);
    return fail(options_.socket_path + ": " + std::strerror(err));
  }
  // A fresh socket buffer holds far more than one hello; anything short of the whole line is
  // a failure (the agent would read the next message as the rest of it).
  if (!hello_.empty()) {
    const ssize_t n = ::send(fd, hello_.data(), hello_.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n != static_cast<ssize_t>(hello_.size())) {
      ::close(fd);
      return fail(options_.socket_path + ": the hello did not go through");
    }
  }
  fd_ = fd;
  registry_slot_ = register_fd(fd);
  backoff_ = options_.min_backoff;
  ++stats_.connects;
  return true;
}

void AgentClient::write_locked() {
  if (fd_ < 0 && !connect_locked()) return;
  while (written_ < queue_.size()) {
    const ssize_t n = ::send(fd_, queue_.data() + written_, queue_.size() - written_,
                             MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;  // the agent is slow: keep it queued
      disconnect_locked(std::string("write: ") + std::strerror(errno), true);
      return;
    }
    // Count the messages whose last byte just went out.
    stats_.sent += count_lines(queue_.data() + written_, static_cast<std::size_t>(n));
    written_ += static_cast<std::size_t>(n);
  }
  if (written_ == queue_.size()) {
    queue_.clear();
    written_ = 0;
  } else if (written_ > 64 * 1024) {
    queue_.erase(0, written_);
    written_ = 0;
  }
}

void AgentClient::disconnect_locked(const std::string& why, bool broken) {
  if (fd_ < 0) return;
  unregister_fd(registry_slot_);
  registry_slot_ = -1;
  ::close(fd_);
  fd_ = -1;
  in_.clear();
  skipping_line_ = false;
  if (!findings_.empty()) {  // stale without the agent
    findings_.clear();
    findings_seq_.fetch_add(1, std::memory_order_relaxed);
  }
  if (broken) {
    ++stats_.disconnects;
    disconnects_.store(stats_.disconnects, std::memory_order_relaxed);
    stats_.last_error = why;
    next_attempt_ = std::chrono::steady_clock::now() + backoff_;
  }
  // A message cut in the middle is lost: the agent dropped its first part with the connection.
  if (written_ != 0 && queue_[written_ - 1] != '\n') {
    const auto end = queue_.find('\n', written_);
    written_ = end == std::string::npos ? queue_.size() : end + 1;
    ++stats_.dropped;
  }
  queue_.erase(0, written_);
  written_ = 0;
}

}  // namespace gpumon::agent
