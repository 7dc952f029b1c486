// SPDX-License-Identifier: MIT
// Sending the signal the user confirmed in the live view, to the process they chose and no
// other: between the prompt and the answer the process may have exited and its PID been
// reused, so the PID must still have the start time and command line it had when asked.
#pragma once

#include <functional>
#include <string>

#include "cli/watch_keys.h"
#include "host/proc_files.h"

namespace gpumon::cli {

/// kill(2)'s shape: 0, or -1 with errno set. Tests pass a fake.
using KillFn = std::function<int(int pid, int signal)>;

/// Sends `request` when its process is still the one the user chose; returns the sentence the
/// view shows ("Sent SIGTERM to PID 4242.", or why nothing was sent).
std::string send_confirmed_signal(const host::ProcFiles& proc, const SignalRequest& request,
                                  const KillFn& kill_fn);

}  // namespace gpumon::cli
