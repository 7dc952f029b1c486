// SPDX-License-Identifier: MIT
// Helpers for the tests that run a real AgentServer in the test process (src/agent and
// src/client): sinks that keep what the server received, starting a server on a fresh socket,
// and waiting for its thread to catch up.
//
// Thread-safety: Received may be read while the server's thread adds to it.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "agent/agent_server.h"
#include "record/test_support.h"

namespace gpumon::agent::testing {

using record::testing::TempDir;

/// What an AgentServer's sinks received.
class Received {
 public:
  AgentSinks sinks();
  // Copies under the lock: the server's thread may still be adding (disconnects, byes).
  std::vector<record::RecordedStep> steps();
  std::vector<record::RecordedRankEvent> events();
  std::size_t step_count();
  std::size_t warning_count();
  std::size_t count_events(const std::string& kind);

 private:
  std::mutex mu_;
  std::vector<record::RecordedStep> steps_;
  std::vector<record::RecordedRankEvent> events_;
  std::vector<std::string> warnings_;
};

/// Polls `done` every 5 ms until it holds or `limit` passed; its last answer.
bool eventually(const std::function<bool()>& done,
                std::chrono::milliseconds limit = std::chrono::seconds(5));

/// Prepares `path` and starts a server on it feeding `r`, reading its clients every
/// `read_interval`; a test failure (and nullptr) when either fails.
std::unique_ptr<AgentServer> start_server(
    const std::string& path, Received& r, std::size_t max_clients = 256,
    std::chrono::milliseconds read_interval = AgentServerOptions{}.read_interval);

}  // namespace gpumon::agent::testing
