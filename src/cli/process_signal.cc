// SPDX-License-Identifier: MIT
#include "cli/process_signal.h"

#include <fmt/format.h>

#include <cerrno>
#include <csignal>
#include <cstring>

#include "host/process_brief.h"

namespace gpumon::cli {

std::string send_confirmed_signal(const host::ProcFiles& proc, const SignalRequest& request,
                                  const KillFn& kill_fn) {
  const unsigned pid = request.target.pid;
  const char* name = request.signal == SIGKILL ? "SIGKILL" : "SIGTERM";
  const auto now = host::read_process_brief(proc, pid);
  if (!now) return fmt::format("PID {} has exited: {} not sent.", pid, name);
  if (!request.start_ticks || *request.start_ticks != now->start_ticks ||
      (!request.command.empty() && now->command != request.command))
    return fmt::format("PID {} is now another process: {} not sent.", pid, name);
  if (kill_fn(static_cast<int>(pid), request.signal) == 0)
    return fmt::format("Sent {} to PID {}.", name, pid);
  const int error = errno;
  if (error == EPERM)
    return fmt::format(
        "Cannot send {} to PID {}: not permitted (another user's process: run "
        "gpumon as that user or as root).",
        name, pid);
  return fmt::format("Cannot send {} to PID {}: {}.", name, pid, std::strerror(error));
}

}  // namespace gpumon::cli
