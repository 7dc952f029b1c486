// SPDX-License-Identifier: MIT
#include "client/agent_launcher.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "agent/socket_path.h"

namespace gpumon::client {
namespace {

bool executable_file(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
}

std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : fallback;
}

// Double fork: the agent is re-parented to init (no zombie left in the training process) and
// leads its own session (a Ctrl-C to the training job does not reach it).
std::string spawn_detached(const std::vector<std::string>& args, const std::string& log) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const int in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  // O_NOFOLLOW: a link planted where the log goes must not make us create or append to its target.
  const int err = ::open(log.empty() ? "/dev/null" : log.c_str(),
                         O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
  const int out = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  std::string why;
  if (err < 0) why = "cannot open the log " + log + ": " + std::strerror(errno);
  if (in < 0 || out < 0) why = std::string("cannot open /dev/null: ") + std::strerror(errno);
  pid_t child = why.empty() ? ::fork() : -1;
  if (why.empty() && child < 0) why = std::string("fork: ") + std::strerror(errno);
  if (child == 0) {  // only async-signal-safe calls from here on
    ::setsid();
    if (::fork() != 0) ::_exit(0);
    ::dup2(in, 0);
    ::dup2(out, 1);
    ::dup2(err, 2);
    ::close_range(3, ~0U, 0);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  if (child > 0) {
    int status = 0;
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
  }
  for (int fd : {in, err, out})
    if (fd >= 0) ::close(fd);
  return why;
}

}  // namespace

bool is_listening(const std::string& path) {
  sockaddr_un addr{};
  if (path.size() >= sizeof addr.sun_path) return false;
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return false;
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size());
  const int rc = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
  const bool ok = rc == 0 || errno == EAGAIN;  // EAGAIN: listening, its backlog is full
  ::close(fd);
  return ok;
}

std::optional<std::string> find_gpumon_binary(const std::string& fallback, const std::string& own) {
  if (const char* forced = std::getenv("GPUMON_BINARY")) {
    if (executable_file(forced)) return std::string(forced);
    return std::nullopt;
  }
  if (!own.empty() && executable_file(own)) return own;
  const std::string path = env_or("PATH", "/usr/local/bin:/usr/bin:/bin");
  std::size_t begin = 0;
  while (begin <= path.size()) {
    std::size_t end = path.find(':', begin);
    if (end == std::string::npos) end = path.size();
    std::string dir = path.substr(begin, end - begin);
    if (dir.empty()) dir = ".";
    const std::string candidate = dir + "/gpumon";
    if (executable_file(candidate)) return candidate;
    begin = end + 1;
  }
  if (!fallback.empty() && executable_file(fallback)) return fallback;
  return std::nullopt;
}

std::string start_agent_once(const std::string& binary, const std::string& path,
                             const std::string& record) {
  if (std::string why = agent::check_socket_folder(path, true); !why.empty()) return why;
  const auto slash = path.rfind('/');
  const std::string folder = slash == std::string::npos ? "." : path.substr(0, slash);
  const std::string lock_path = folder + "/.agent-start.lock";
  // O_NOFOLLOW: never create or touch the target of a link planted as the lock.
  const int lock =
      ::open(lock_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (lock < 0) return "cannot open " + lock_path + ": " + std::strerror(errno);
  while (::flock(lock, LOCK_EX) != 0 && errno == EINTR) {
  }
  std::string why;
  if (!is_listening(path)) {
    std::vector<std::string> args = {binary,
                                     "agent",
                                     "--socket",
                                     path,
                                     "--exit-when-idle",
                                     env_or("GPUMON_AGENT_IDLE_EXIT_S", "30")};
    if (!record.empty()) {
      args.emplace_back("-o");
      args.push_back(record);
    }
    why = spawn_detached(args, env_or("GPUMON_AGENT_LOG", ""));
    // A rank waits this long at most (GPUMON_AGENT_START_TIMEOUT_S, default 5 s; a loaded
    // machine starting several ranks at once may need more), then trains unmonitored.
    std::string wait_text = env_or("GPUMON_AGENT_START_TIMEOUT_S", "5");
    char* end = nullptr;
    double wait_s = std::strtod(wait_text.c_str(), &end);
    if (end == wait_text.c_str() || *end != '\0' || !(wait_s > 0) || wait_s > 3600)
      wait_s = 5, wait_text = "5";  // unset or not a number of seconds up to an hour
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                              std::chrono::duration<double>(wait_s));
    while (why.empty() && !is_listening(path)) {
      if (std::chrono::steady_clock::now() > deadline) {
        why = "it did not listen within " + wait_text +
              " s (set GPUMON_AGENT_LOG=FILE to see its messages, GPUMON_AGENT_START_TIMEOUT_S "
              "to wait longer)";
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  ::close(lock);  // releases the lock
  return why;
}

}  // namespace gpumon::client
