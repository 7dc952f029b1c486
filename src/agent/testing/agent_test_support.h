// SPDX-License-Identifier: MIT
// Helpers for the tests that run a real AgentServer in the test process (src/agent and
// src/client): sinks that keep what the server received, starting a server on a fresh socket,
// and waiting for its thread to catch up.
//
// Thread-safety: Received may be read while the server's thread adds to it.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "agent/agent_server.h"
#include "training/training_types.h"
#include "util/testing/eventually.h"
#include "util/testing/temp_dir.h"

namespace gpumon::agent::testing {

using ::gpumon::testing_util::eventually;
using ::gpumon::testing_util::TempDir;

/// What an AgentServer's sinks received.
class Received : public training::StepSink {
 public:
  /// Sinks feeding this object (which must outlive the server).
  AgentSinks sinks();
  void on_step(const training::Step& s) override;
  void on_rank_event(const training::RankEvent& e) override;
  // Copies under the lock: the server's thread may still be adding (disconnects, byes).
  std::vector<training::Step> steps();
  std::vector<training::RankEvent> events();
  std::size_t step_count();
  std::size_t warning_count();
  std::size_t count_events(const std::string& kind);

 private:
  std::mutex mu_;
  std::vector<training::Step> steps_;
  std::vector<training::RankEvent> events_;
  std::vector<std::string> warnings_;
};

/// Prepares `path` and starts a server on it feeding `r`, reading its clients every
/// `read_interval`; a test failure (and nullptr) when either fails.
std::unique_ptr<AgentServer> start_server(
    const std::string& path, Received& r, std::size_t max_clients = 256,
    std::chrono::milliseconds read_interval = AgentServerOptions{}.read_interval);

}  // namespace gpumon::agent::testing
