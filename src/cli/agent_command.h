// SPDX-License-Identifier: MIT
// `gpumon agent [--socket PATH] [-o FILE] [--interval MS] [--exit-when-idle S]
// [--no-diagnose]`: the per-node agent (issue 4, docs/python.md). It listens on a private Unix
// socket for the step events of training processes (`import gpumon`), samples the GPUs, runs the
// live diagnoses (logged on stderr, pushed to the clients) and, with -o, records it all; it
// runs until Ctrl-C / SIGTERM (or S seconds without a client). `gpumon record -- CMD` opens the
// same socket for CMD and passes its path in GPUMON_AGENT_SOCKET.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "agent/agent_server.h"
#include "cli/console.h"
#include "diagnose/live/live_diagnoser.h"
#include "record/recording_writer.h"

namespace gpumon::cli {

int run_agent_command(const std::vector<std::string>& args, const Console& console);

/// Prepares `path` and listens there; steps and rank events go to `writer` and `live` (either
/// may be null: then they are only counted). Client warnings are printed on console.err with
/// `prefix`. nullptr and `error` when the socket cannot be opened.
std::unique_ptr<agent::AgentServer> open_agent_socket(
    const std::string& path, std::shared_ptr<record::RecordingWriter> writer,
    const Console& console, const std::string& prefix, std::string& error,
    std::shared_ptr<diagnose::LiveDiagnoser> live = nullptr);

/// Starts `live` with a listener that logs each finding appearing or clearing on console.err
/// (one line each, after `prefix`) and pushes the compact list to the clients of `push_to`
/// (may be null), which get the current list at once. The console and the server must outlive
/// the diagnoser's thread (stop `live` first).
void start_live_findings(diagnose::LiveDiagnoser& live, const Console& console,
                         const std::string& prefix, agent::AgentServer* push_to);

}  // namespace gpumon::cli
