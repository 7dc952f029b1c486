// SPDX-License-Identifier: MIT
// The CPU cost of gpumon::Monitor's per-step calls (target: step() plus the loader
// wrapper at most 10 us per step, median), connected to a real AgentServer in this process
// whose sink drops the steps. Run: gpumon_bench_client --benchmark_repetitions=10
// --benchmark_report_aggregates_only=true (the median is the figure to quote).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "agent/agent_server.h"
#include "agent/socket_path.h"
#include "gpumon/monitor.h"

namespace {

struct Fixture {
  std::string dir;
  std::unique_ptr<gpumon::agent::AgentServer> server;
  gpumon::Monitor mon;

  Fixture() {
    std::string tmpl = "/tmp/gpumon-bench-client-XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr) std::abort();
    dir = tmpl;
    const std::string path = dir + "/agent.sock";
    std::string error = gpumon::agent::prepare_listen_path(path);
    gpumon::agent::AgentSinks sinks{[](const gpumon::training::Step&) {},
                                    [](const gpumon::training::RankEvent&) {},
                                    [](const std::string&) {}};
    server = gpumon::agent::AgentServer::start({path}, std::move(sinks), error);
    if (!server) std::abort();
    gpumon::MonitorOptions o;
    o.socket_path = path;
    mon = gpumon::Monitor::start(o);
    if (!mon.active()) std::abort();
  }
  ~Fixture() {
    mon.close();
    server->stop();
    std::filesystem::remove_all(dir);
  }
};

void BM_Step(benchmark::State& state) {
  Fixture f;
  for (auto _ : state) f.mon.step();
  state.counters["dropped"] = static_cast<double>(f.mon.stats().dropped);
}
BENCHMARK(BM_Step);

void BM_FetchAndStep(benchmark::State& state) {
  Fixture f;
  int batch = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(f.mon.fetch([&] { return ++batch; }));
    f.mon.step();
  }
}
BENCHMARK(BM_FetchAndStep);

void BM_ScopedStepWithAllocatorStats(benchmark::State& state) {
  Fixture f;
  gpumon::AllocatorStats mem;
  mem.allocated_bytes = 123456789;
  mem.reserved_bytes = 987654321;
  for (auto _ : state) {
    f.mon.set_allocator_stats(mem);
    auto s = f.mon.scoped_step();
  }
}
BENCHMARK(BM_ScopedStepWithAllocatorStats);

void BM_StepInactive(benchmark::State& state) {
  gpumon::Monitor mon;
  for (auto _ : state) mon.step();
}
BENCHMARK(BM_StepInactive);

}  // namespace

BENCHMARK_MAIN();
