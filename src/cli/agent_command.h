// SPDX-License-Identifier: MIT
// `gpumon agent [--socket PATH] [-o FILE] [--interval MS] [--exit-when-idle S]`: the per-node
// agent (issue 4, docs/python.md). It listens on a private Unix socket for the step events of
// training processes (`import gpumon`) and, with -o, records them with every GPU's samples; it
// runs until Ctrl-C / SIGTERM (or S seconds without a client). `gpumon record -- CMD` opens the
// same socket for CMD and passes its path in GPUMON_AGENT_SOCKET.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "agent/agent_server.h"
#include "cli/console.h"
#include "record/recording_writer.h"

namespace gpumon::cli {

int run_agent_command(const std::vector<std::string>& args, const Console& console);

/// Prepares `path` and listens there; steps and rank events go to `writer` (may be null: then
/// they are only counted). Client warnings are printed on console.err with `prefix`. nullptr
/// and `error` when the socket cannot be opened.
std::unique_ptr<agent::AgentServer> open_agent_socket(
    const std::string& path, std::shared_ptr<record::RecordingWriter> writer,
    const Console& console, const std::string& prefix, std::string& error);

}  // namespace gpumon::cli
