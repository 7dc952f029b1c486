// SPDX-License-Identifier: MIT
#include "agent/testing/agent_test_support.h"

#include <gtest/gtest.h>

#include "agent/socket_path.h"

namespace gpumon::agent::testing {

AgentSinks Received::sinks() {
  // Not owned: an aliasing pointer to this object.
  return {std::shared_ptr<training::StepSink>(std::shared_ptr<void>(), this),
          [this](const std::string& w) {
            std::lock_guard l(mu_);
            warnings_.push_back(w);
          }};
}

void Received::on_step(const training::Step& s) {
  std::lock_guard l(mu_);
  steps_.push_back(s);
}

void Received::on_rank_event(const training::RankEvent& e) {
  std::lock_guard l(mu_);
  events_.push_back(e);
}

std::vector<training::Step> Received::steps() {
  std::lock_guard l(mu_);
  return steps_;
}

std::vector<training::RankEvent> Received::events() {
  std::lock_guard l(mu_);
  return events_;
}

std::size_t Received::step_count() {
  std::lock_guard l(mu_);
  return steps_.size();
}

std::size_t Received::warning_count() {
  std::lock_guard l(mu_);
  return warnings_.size();
}

std::size_t Received::count_events(const std::string& kind) {
  std::lock_guard l(mu_);
  std::size_t n = 0;
  for (const auto& e : events_) n += e.kind == kind;
  return n;
}

std::unique_ptr<AgentServer> start_server(const std::string& path, Received& r,
                                          std::size_t max_clients,
                                          std::chrono::milliseconds read_interval) {
  if (auto e = prepare_listen_path(path); !e.empty()) ADD_FAILURE() << e;
  std::string error;
  auto server = AgentServer::start({path, max_clients, read_interval}, r.sinks(), error);
  EXPECT_NE(server, nullptr) << error;
  return server;
}

}  // namespace gpumon::agent::testing
