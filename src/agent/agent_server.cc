// SPDX-License-Identifier: MIT
#include "agent/agent_server.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <nlohmann/json.hpp>
#include <vector>

#include "training/protocol.h"

namespace gpumon::agent {
using namespace training;
namespace {

std::int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::int64_t steady_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

struct AgentServer::Client {
  int fd = -1;
  std::string buffer;  // bytes received after the last complete line
  bool hello = false;
  bool bye = false;
  Hello info;
  pid_t peer_pid = 0;          // SO_PEERCRED, for messages before the hello
  std::string dropped_for;     // why we closed it; empty when the client left by itself
  std::string out;             // pushed lines not yet written
  std::uint64_t push_seq = 0;  // the pushed line it has (queued or written)
  bool write_closed = false;   // it stopped reading (closed): what it wrote is still read
  bool more = false;           // the last read stopped at its cap: read again at once
};

std::unique_ptr<AgentServer> AgentServer::start(const AgentServerOptions& options, AgentSinks sinks,
                                                std::string& error) {
  const std::string& path = options.socket_path;
  sockaddr_un addr{};
  if (path.empty() || path.size() >= sizeof(addr.sun_path)) {
    error = path + ": not a usable Unix socket path";
    return nullptr;
  }
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size());
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    error = std::string("socket: ") + std::strerror(errno);
    return nullptr;
  }
  // The file's identity, for stop(): fstat() on a socket gives the socket's own inode, not the
  // file's, so it is taken from the path right after bind().
  struct stat bound {};
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::chmod(path.c_str(), 0600) != 0 || ::stat(path.c_str(), &bound) != 0 ||
      ::listen(fd, 64) != 0) {
    error = path + ": cannot listen: " + std::strerror(errno);
    ::close(fd);
    return nullptr;
  }
  const int wake = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake < 0) {
    error = std::string("eventfd: ") + std::strerror(errno);
    ::close(fd);
    ::unlink(path.c_str());
    return nullptr;
  }
  auto server = std::unique_ptr<AgentServer>(new AgentServer(options, std::move(sinks), fd, wake));
  server->bound_dev_ = bound.st_dev;
  server->bound_ino_ = bound.st_ino;
  return server;
}

AgentServer::AgentServer(const AgentServerOptions& options, AgentSinks sinks, int listen_fd,
                         int wake_fd)
    : options_(options), sinks_(std::move(sinks)), listen_fd_(listen_fd), wake_fd_(wake_fd) {
  thread_ = std::thread([this] { run(); });
}

AgentServer::~AgentServer() {
  stop();
}

void AgentServer::push(std::string line) {
  {
    std::lock_guard lock(push_mutex_);
    push_line_ = std::move(line);
    push_line_ += '\n';
    ++push_seq_;
  }
  const std::uint64_t one = 1;
  [[maybe_unused]] auto n = ::write(wake_fd_, &one, sizeof one);
}

void AgentServer::stop() {
  std::lock_guard lock(stop_mutex_);
  if (!thread_.joinable()) return;
  stopping_.store(true);
  const std::uint64_t one = 1;
  [[maybe_unused]] auto n = ::write(wake_fd_, &one, sizeof one);
  thread_.join();
  // Remove the socket file only while it is still the one we bound: another agent that took
  // the path over (after removing ours as stale) keeps its socket.
  struct stat by_path {};
  if (::stat(options_.socket_path.c_str(), &by_path) == 0 && S_ISSOCK(by_path.st_mode) &&
      by_path.st_dev == bound_dev_ && by_path.st_ino == bound_ino_)
    ::unlink(options_.socket_path.c_str());
  ::close(listen_fd_);
  ::close(wake_fd_);
}

AgentServerStats AgentServer::stats() const {
  std::lock_guard lock(stats_mutex_);
  return stats_;
}

double AgentServer::idle_seconds() const {
  std::lock_guard lock(stats_mutex_);
  if (stats_.clients_now != 0 || idle_since_ms_ == 0) return 0;
  return static_cast<double>(steady_ms() - idle_since_ms_) / 1000.0;
}

void AgentServer::run() noexcept {
  using std::chrono::steady_clock;
  std::vector<std::unique_ptr<Client>> clients;
  std::vector<pollfd> fds;
  auto next_read = steady_clock::now();
  while (!stopping_.load()) {
    // After its hello a client's socket is polled only for room to write pushed lines: a
    // client writing its steps must not wake this thread (see the header); they are read on
    // the clock. Its hello is read as soon as it comes.
    fds.clear();
    fds.push_back({wake_fd_, POLLIN, 0});
    fds.push_back({listen_fd_, POLLIN, 0});
    bool more = false;
    for (const auto& c : clients) {
      const short events =
          static_cast<short>((c->out.empty() ? 0 : POLLOUT) | (c->hello ? 0 : POLLIN));
      fds.push_back({c->fd, events, 0});
      more = more || c->more;
    }
    int timeout_ms = -1;
    if (more) {
      timeout_ms = 0;
    } else if (!clients.empty()) {
      const auto left =
          std::chrono::ceil<std::chrono::milliseconds>(next_read - steady_clock::now());
      timeout_ms = static_cast<int>(std::max<std::int64_t>(left.count(), 0));
    }
    if (::poll(fds.data(), fds.size(), timeout_ms) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[0].revents != 0) {  // stop(), or a push
      std::uint64_t count = 0;
      [[maybe_unused]] auto n = ::read(wake_fd_, &count, sizeof count);
      if (stopping_.load()) break;
    }
    const auto now = steady_clock::now();
    const bool read_due = now >= next_read;
    if (read_due) next_read = now + options_.read_interval;
    std::vector<std::unique_ptr<Client>> keep;
    for (std::size_t i = 0; i < clients.size(); ++i) {
      Client& c = *clients[i];
      bool alive = true;
      try {
        // POLLHUP/POLLERR come unasked: the client is gone, read what it left.
        if (read_due || c.more || (fds[i + 2].revents & ~POLLOUT) != 0) alive = read_client(c);
        if (alive) write_client(c);
      } catch (...) {  // bad_alloc, or a sink that threw: drop that client, never the agent
        drop(c, "internal error while reading");
        alive = false;
      }
      if (alive)
        keep.push_back(std::move(clients[i]));
      else
        finish_client(c);
    }
    clients.swap(keep);
    if (fds[1].revents & POLLIN) accept_pending(clients);
    std::lock_guard lock(stats_mutex_);
    if (stats_.clients_now != 0 && clients.empty()) idle_since_ms_ = steady_ms();
    stats_.clients_now = clients.size();
  }
  // Stopping: what clients wrote before the stop is read first, the connections still waiting
  // to be accepted included, so a rank that finished and said bye loses nothing (a training
  // run that ends just before `gpumon record` stops its agent).
  accept_pending(clients);
  for (auto& c : clients) {
    try {
      for (int k = 0; k < 64; ++k) {  // at most 16 MiB a client
        int pending = 0;
        if (::ioctl(c->fd, FIONREAD, &pending) != 0 || pending <= 0 || !read_client(*c)) break;
      }
    } catch (...) {  // as in the loop: never the agent
    }
    finish_client(*c);
  }
  std::lock_guard lock(stats_mutex_);
  stats_.clients_now = 0;
}

void AgentServer::accept_pending(std::vector<std::unique_ptr<Client>>& clients) {
  for (;;) {
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;
    std::lock_guard lock(stats_mutex_);
    if (clients.size() >= options_.max_clients) {
      ::close(fd);
      ++stats_.clients_refused;
      continue;
    }
    auto c = std::make_unique<Client>();
    c->fd = fd;
    ucred cred{};
    socklen_t len = sizeof cred;
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0) c->peer_pid = cred.pid;
    clients.push_back(std::move(c));
    ++stats_.clients_accepted;
  }
}

bool AgentServer::read_client(Client& c) {
  char chunk[16384];
  // At most 16 reads (256 KiB) at a time, so one fast sender cannot starve the others.
  c.more = false;
  for (int reads = 0; reads < 16; ++reads) {
    const ssize_t n = ::recv(c.fd, chunk, sizeof chunk, 0);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
      if (!c.buffer.empty()) {
        std::lock_guard lock(stats_mutex_);
        ++stats_.partial_at_close;
      }
      return false;  // closed (or reset): a partial last message is discarded
    }
    if (n < 0) {
      if (errno == EINTR) continue;
      return true;  // drained
    }
    c.buffer.append(chunk, static_cast<std::size_t>(n));
    std::size_t start = 0;
    for (std::size_t nl; (nl = c.buffer.find('\n', start)) != std::string::npos; start = nl + 1) {
      if (!handle_line(c, std::string_view(c.buffer).substr(start, nl - start))) return false;
    }
    c.buffer.erase(0, start);
    if (c.buffer.size() >= kMaxMessageBytes) {
      drop(c, "message longer than " + std::to_string(kMaxMessageBytes - 1) + " bytes");
      return false;
    }
    if (static_cast<std::size_t>(n) < sizeof chunk) return true;
  }
  c.more = true;  // more may wait: read again at once
  return true;
}

bool AgentServer::handle_line(Client& c, std::string_view line) {
  if (line.empty()) return true;
  auto parsed = parse_message(line);
  if (auto* e = std::get_if<std::string>(&parsed)) {
    drop(c, *e);
    return false;
  }
  Message& m = std::get<Message>(parsed);
  if (!c.hello && !std::holds_alternative<Hello>(m)) {
    drop(c, "the first message must be a hello");
    return false;
  }
  {
    std::lock_guard lock(stats_mutex_);
    ++stats_.messages;
    if (std::holds_alternative<Step>(m)) ++stats_.steps;
    if (std::holds_alternative<Unknown>(m)) ++stats_.unknown;
  }
  auto event = [&](std::string kind, std::string detail) {
    if (sinks_.steps)
      sinks_.steps->on_rank_event(
          {wall_ms(), c.info.pid, c.info.rank, std::move(kind), std::move(detail), std::nullopt});
  };
  if (auto* h = std::get_if<Hello>(&m)) {
    if (c.hello) {
      drop(c, "a second hello");
      return false;
    }
    c.hello = true;
    c.info = std::move(*h);
    if (sinks_.steps) {
      RankEvent hello{wall_ms(), c.info.pid, c.info.rank, "hello", c.info.json, c.info};
      hello.peer_pid = c.peer_pid;
      sinks_.steps->on_rank_event(hello);
    }
  } else if (auto* s = std::get_if<Step>(&m)) {
    Step& r = *s;
    r.received_ms = wall_ms();
    r.pid = c.info.pid;
    r.rank = c.info.rank;
    r.local_rank = c.info.local_rank;
    r.world_size = c.info.world_size;
    r.device = c.info.device;
    if (sinks_.steps) sinks_.steps->on_step(r);
  } else if (auto* o = std::get_if<Oom>(&m)) {
    event("oom", std::move(o->json));
  } else if (auto* e = std::get_if<Error>(&m)) {
    event("error", std::move(e->json));
  } else if (auto* a = std::get_if<Action>(&m)) {
    event("action", std::move(a->json));
  } else if (auto* d = std::get_if<DeviceUpdate>(&m)) {
    apply_device(c.info, *d);  // later steps carry the device too
    if (sinks_.steps)
      sinks_.steps->on_rank_event(
          {wall_ms(), c.info.pid, c.info.rank, "device", c.info.json, c.info});
  } else if (std::holds_alternative<Bye>(m)) {
    c.bye = true;
    event("bye", "{}");
  }
  return true;
}

void AgentServer::write_client(Client& c) {
  if (!c.hello || c.write_closed) return;
  {
    std::lock_guard lock(push_mutex_);
    if (c.push_seq != push_seq_) {
      c.push_seq = push_seq_;
      std::lock_guard stats_lock(stats_mutex_);
      if (c.out.size() + push_line_.size() <= kMaxPushBacklog) {
        c.out += push_line_;
        ++stats_.pushed;
      } else {
        ++stats_.push_dropped;
      }
    }
  }
  while (!c.out.empty()) {
    const ssize_t n = ::send(c.fd, c.out.data(), c.out.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;  // full: poll() says when
      // The client closed (EPIPE, ECONNRESET): a rank that sent its steps and a bye and
      // closed before this push must not lose them. Stop writing; reading goes on to EOF.
      c.write_closed = true;
      c.out.clear();
      return;
    }
    c.out.erase(0, static_cast<std::size_t>(n));
  }
}

void AgentServer::drop(Client& c, const std::string& why) {
  const std::string who =
      "client pid " + std::to_string(c.hello ? c.info.pid : c.peer_pid) + ": " + why;
  {
    std::lock_guard lock(stats_mutex_);
    ++stats_.clients_dropped;
    stats_.last_error = who;
  }
  c.dropped_for = why;
  if (sinks_.on_warning) sinks_.on_warning(who + " (connection closed)");
}

void AgentServer::finish_client(Client& c) {
  if (c.fd >= 0) ::close(c.fd);
  c.fd = -1;
  if (c.hello && !c.bye && sinks_.steps) {
    try {
      const nlohmann::json reason = {{"reason", c.dropped_for}};
      const std::string detail =
          c.dropped_for.empty()
              ? "{}"
              : reason.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      sinks_.steps->on_rank_event({wall_ms(), c.info.pid, c.info.rank,
                                   c.dropped_for.empty() ? "disconnect" : "dropped", detail,
                                   std::nullopt});
    } catch (...) {
    }
  }
}

}  // namespace gpumon::agent
