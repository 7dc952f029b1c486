// SPDX-License-Identifier: MIT
#include "cli/serve_agent.h"

#include <mutex>

#include "agent/socket_path.h"

namespace gpumon::cli {

std::unique_ptr<agent::AgentServer> start_serve_agent(
    const std::string& path, std::shared_ptr<exporter::TrainingState> training,
    std::shared_ptr<record::RecordingWriter> writer, const Console& console, std::string& error,
    std::shared_ptr<diagnose::LiveDiagnoser> live) {
  if (error = agent::prepare_listen_path(path); !error.empty()) return nullptr;
  agent::AgentSinks sinks;
  sinks.on_step = [training, writer, live](const record::RecordedStep& s) {
    training->on_step(s);
    if (writer) writer->on_step(s);  // only queues
    if (live) live->on_step(s);      // likewise
  };
  sinks.on_rank_event = [training, writer, live](const record::RecordedRankEvent& e) {
    training->on_rank_event(e);
    if (writer) writer->on_rank_event(e);
    if (live) live->on_rank_event(e);
  };
  auto err_mutex = std::make_shared<std::mutex>();
  std::ostream* err = &console.err;
  sinks.on_warning = [err, err_mutex](const std::string& w) {
    std::lock_guard lock(*err_mutex);
    *err << "gpumon serve: agent socket: " << w << '\n' << std::flush;
  };
  return agent::AgentServer::start({.socket_path = path}, std::move(sinks), error);
}

}  // namespace gpumon::cli
