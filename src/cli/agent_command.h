// SPDX-License-Identifier: MIT
// `gpumon agent [--socket PATH] [-o FILE] [--interval MS] [--exit-when-idle S]
// [--no-diagnose]`: the per-node agent (docs/python.md), a NodePipeline (node/node_pipeline.h). It
// listens on a private Unix socket for the step events of training processes (`import gpumon`),
// samples the GPUs, runs the live diagnoses (logged on stderr, pushed to the clients) and, with -o,
// records it all; it runs until Ctrl-C / SIGTERM (or S seconds without a client). `gpumon record --
// CMD` opens the same socket for CMD and passes its path in GPUMON_AGENT_SOCKET.
#pragma once

#include <string>
#include <vector>

#include "cli/console.h"

namespace gpumon::cli {

int run_agent_command(const std::vector<std::string>& args, const Console& console);

}  // namespace gpumon::cli
