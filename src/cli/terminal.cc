// SPDX-License-Identifier: MIT
#include "cli/terminal.h"

#include <poll.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <vector>

namespace gpumon::cli {
namespace {

constexpr std::string_view kEnter = "\x1b[?1049h\x1b[?25l\x1b[H\x1b[2J";
constexpr std::string_view kLeave = "\x1b[0m\x1b[?25h\x1b[?1049l";

// Process-wide state: signal handlers and the atexit hook take no arguments, so the one
// active screen lives here. Only async-signal-safe things are touched from handlers.
struct State {
  volatile std::sig_atomic_t quit = 0;
  volatile std::sig_atomic_t resized = 0;
  volatile std::sig_atomic_t suspend = 0;
  volatile std::sig_atomic_t active = 0;  ///< the alternate screen is on
  int in_fd = -1;
  int out_fd = -1;
  bool have_termios = false;
  termios saved{};
  bool atexit_registered = false;
};
constexpr std::array<int, 5> kHandledSignals = {SIGINT, SIGTERM, SIGHUP, SIGWINCH, SIGTSTP};
// What the signals did before the live view (SIG_IGN under nohup, say), to put back after it.
std::array<struct sigaction, kHandledSignals.size()> g_previous{};
State g_state;

void write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    text.remove_prefix(static_cast<std::size_t>(n));
  }
}

// Async-signal-safe: write(2) and tcsetattr(3) only.
void restore_terminal() {
  if (g_state.active == 0) return;
  g_state.active = 0;
  write_all(g_state.out_fd, kLeave);
  if (g_state.have_termios) ::tcsetattr(g_state.in_fd, TCSAFLUSH, &g_state.saved);
}

void at_exit() {
  restore_terminal();
}

extern "C" void on_quit_signal(int sig) {
  if (g_state.quit != 0) {
    // The loop did not react to the first signal (stuck in a driver call?): restore the
    // terminal here and leave with the conventional status.
    const int saved_errno = errno;
    restore_terminal();
    errno = saved_errno;
    ::_exit(128 + sig);
  }
  g_state.quit = 1;
}
extern "C" void on_winch(int /*sig*/) {
  g_state.resized = 1;
}
extern "C" void on_tstp(int /*sig*/) {
  g_state.suspend = 1;
}

void install(int sig, void (*handler)(int), struct sigaction* previous = nullptr) {
  struct sigaction sa {};
  sa.sa_handler = handler;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: poll() returns EINTR so the loop reacts at once
  ::sigaction(sig, &sa, previous);
}

}  // namespace

std::optional<TerminalSize> terminal_size(int fd) {
  winsize ws{};
  if (::ioctl(fd, TIOCGWINSZ, &ws) != 0 || ws.ws_row == 0 || ws.ws_col == 0) return std::nullopt;
  return TerminalSize{ws.ws_row, ws.ws_col};
}

std::unique_ptr<FullScreen> FullScreen::enter(int in_fd, int out_fd, std::string* error) {
  if (::isatty(out_fd) == 0) {
    if (error != nullptr) *error = "standard output is not a terminal";
    return nullptr;
  }
  std::unique_ptr<FullScreen> screen(new FullScreen(in_fd, out_fd));
  g_state.quit = 0;
  g_state.resized = 0;
  g_state.suspend = 0;
  if (!g_state.atexit_registered) {
    std::atexit(at_exit);
    g_state.atexit_registered = true;
  }
  for (std::size_t i = 0; i < kHandledSignals.size(); ++i) {
    const int sig = kHandledSignals[i];
    install(sig,
            sig == SIGWINCH  ? on_winch
            : sig == SIGTSTP ? on_tstp
                             : on_quit_signal,
            &g_previous[i]);
  }
  screen->setup();
  return screen;
}

void FullScreen::setup() {
  g_state.in_fd = in_fd_;
  g_state.out_fd = out_fd_;
  g_state.have_termios = false;
  if (::isatty(in_fd_) != 0 && ::tcgetattr(in_fd_, &g_state.saved) == 0) {
    termios raw = g_state.saved;
    raw.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO);
    raw.c_cc[VMIN] = 0;
    raw.c_cc[VTIME] = 0;
    if (::tcsetattr(in_fd_, TCSAFLUSH, &raw) == 0) g_state.have_termios = true;
  }
  write_all(out_fd_, kEnter);
  g_state.active = 1;
}

FullScreen::~FullScreen() {
  restore();
  for (std::size_t i = 0; i < kHandledSignals.size(); ++i) {
    ::sigaction(kHandledSignals[i], &g_previous[i], nullptr);
  }
}

void FullScreen::restore() {
  restore_terminal();
}

void FullScreen::write(std::string_view text) const {
  write_all(out_fd_, text);
}

void FullScreen::draw(const std::vector<std::string>& lines) const {
  std::string frame = "\x1b[H";
  for (std::size_t i = 0; i < lines.size(); ++i) {
    frame += lines[i];
    frame += "\x1b[0m\x1b[K";
    if (i + 1 < lines.size()) frame += "\r\n";
  }
  frame += "\x1b[J";
  write_all(out_fd_, frame);
}

std::string FullScreen::wait_for_input(std::chrono::milliseconds timeout) {
  pollfd pfd{in_fd_, POLLIN, 0};
  const bool watch_input = input_open_ && in_fd_ >= 0;
  const int rc =
      ::poll(watch_input ? &pfd : nullptr, watch_input ? 1 : 0,
             static_cast<int>(std::max<std::chrono::milliseconds::rep>(timeout.count(), 0)));
  if (rc <= 0 || !watch_input || (pfd.revents & (POLLIN | POLLHUP)) == 0) return {};
  std::array<char, 64> buf{};
  const ssize_t n = ::read(in_fd_, buf.data(), buf.size());
  if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
    input_open_ = false;  // end of input (stdin from /dev/null): stop polling it
    return {};
  }
  return n > 0 ? std::string(buf.data(), static_cast<std::size_t>(n)) : std::string();
}

PendingSignals FullScreen::take_signals() {
  PendingSignals p;
  p.quit = g_state.quit != 0;
  p.resized = g_state.resized != 0;
  p.suspend = g_state.suspend != 0;
  g_state.resized = 0;
  g_state.suspend = 0;
  return p;
}

void FullScreen::suspend() {
  restore_terminal();
  ::signal(SIGTSTP, SIG_DFL);
  ::raise(SIGTSTP);  // stops here until SIGCONT
  install(SIGTSTP, on_tstp);
  setup();
}

}  // namespace gpumon::cli
