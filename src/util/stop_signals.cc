// SPDX-License-Identifier: MIT
#include "util/stop_signals.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <ctime>

namespace gpumon::util {
namespace {

volatile std::sig_atomic_t g_stop = 0;  // the last signal, 0 when none
volatile std::sig_atomic_t g_second_kills = 1;
// Self-pipe: the handler writes a byte so that a sleeping ppoll() wakes at once, with no window
// between checking the flag and starting to sleep.
int g_wake_read = -1;
volatile std::sig_atomic_t g_wake_write = -1;

extern "C" void on_stop_signal(int signo) {
  if (g_stop != 0 && g_second_kills != 0) {
    std::signal(signo, SIG_DFL);
    std::raise(signo);
    return;
  }
  g_stop = signo;
  const int saved = errno;
  const char byte = 1;
  if (g_wake_write >= 0) (void)!write(g_wake_write, &byte, 1);
  errno = saved;
}

void install(int signo, void (*handler)(int), struct sigaction* old) {
  struct sigaction action {};
  action.sa_handler = handler;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;  // no SA_RESTART: a blocked write or sleep returns EINTR
  sigaction(signo, &action, old);
}

void drain_wake_pipe() {
  char buf[64];
  if (g_wake_read >= 0)
    while (read(g_wake_read, buf, sizeof buf) > 0) {
    }
}

}  // namespace

ScopedStopSignals::ScopedStopSignals(Second second) {
  g_stop = 0;
  g_second_kills = second == Second::kKills ? 1 : 0;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) == 0) {
    g_wake_read = fds[0];
    g_wake_write = fds[1];
  }
  install(SIGINT, on_stop_signal, &old_int_);
  install(SIGTERM, on_stop_signal, &old_term_);
  install(SIGHUP, on_stop_signal, &old_hup_);
  install(SIGPIPE, SIG_IGN, &old_pipe_);
  install(SIGXFSZ, SIG_IGN, &old_xfsz_);
}

ScopedStopSignals::~ScopedStopSignals() {
  sigaction(SIGINT, &old_int_, nullptr);
  sigaction(SIGTERM, &old_term_, nullptr);
  sigaction(SIGHUP, &old_hup_, nullptr);
  sigaction(SIGPIPE, &old_pipe_, nullptr);
  sigaction(SIGXFSZ, &old_xfsz_, nullptr);
  const int write_end = g_wake_write;
  g_wake_write = -1;
  if (write_end >= 0) close(write_end);
  if (g_wake_read >= 0) close(g_wake_read);
  g_wake_read = -1;
}

bool ScopedStopSignals::stop_requested() {
  return g_stop != 0;
}

int ScopedStopSignals::last_signal() {
  return g_stop;
}

void ScopedStopSignals::clear() {
  drain_wake_pipe();
  g_stop = 0;
}

sigset_t ScopedStopSignals::child_sigdefault() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGPIPE);
  sigaddset(&set, SIGXFSZ);
  return set;
}

bool ScopedStopSignals::sleep_until(std::chrono::steady_clock::time_point deadline) {
  while (!stop_requested()) {
    const auto left = deadline - std::chrono::steady_clock::now();
    if (left <= std::chrono::steady_clock::duration::zero()) return true;
    const auto secs = std::chrono::duration_cast<std::chrono::seconds>(left);
    timespec timeout{};
    timeout.tv_sec = static_cast<time_t>(secs.count());
    timeout.tv_nsec = static_cast<long>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(left - secs).count());
    if (g_wake_read < 0) {
      nanosleep(&timeout, nullptr);  // no pipe (fd exhaustion): the flag is checked each pass
      continue;
    }
    pollfd wake{g_wake_read, POLLIN, 0};
    ppoll(&wake, 1, &timeout, nullptr);  // EINTR and timeouts both loop back to the checks
  }
  return false;
}

}  // namespace gpumon::util
