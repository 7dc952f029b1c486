// SPDX-License-Identifier: MIT
// The agent socket `gpumon serve` hosts (docs/exporter.md, "Training metrics"), so one process
// per node owns NVML and the training ranks attach to it: their steps and rank events go to the
// exporter's TrainingState, the live diagnoses and, with --record, to the recording.
//
// Built only where the agent is (src/agent needs the recording: SQLite and zstd).
// Thread-safety: the returned server calls the sinks on its own thread; TrainingState and
// RecordingWriter are safe from it.
#pragma once

#include <memory>
#include <string>

#include "agent/agent_server.h"
#include "cli/console.h"
#include "diagnose/live/live_diagnoser.h"
#include "exporter/training_state.h"
#include "record/recording_writer.h"

namespace gpumon::cli {

/// Listens on `path` feeding `training` (not null), `writer` and `live` (either may be null).
/// On failure (another live agent there, a socket of another user, a path too long...) returns
/// nullptr and sets `error`; the caller warns and serves on without it.
std::unique_ptr<agent::AgentServer> start_serve_agent(
    const std::string& path, std::shared_ptr<exporter::TrainingState> training,
    std::shared_ptr<record::RecordingWriter> writer, const Console& console, std::string& error,
    std::shared_ptr<diagnose::LiveDiagnoser> live = nullptr);

}  // namespace gpumon::cli
