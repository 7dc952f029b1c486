// SPDX-License-Identifier: MIT
// gpumon::Monitor against a real AgentServer in this process: the hello, plain and scoped
// steps, data wait, allocator stats, an agent that appears late, an agent that dies, and a
// forked child that must stay silent.
#include "gpumon/monitor.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "agent/agent_server.h"
#include "agent/testing/agent_test_support.h"
#include "client/agent_launcher.h"
#include "client/hand_over_schedule.h"

namespace gpumon {
namespace {

using namespace std::chrono_literals;

using agent::testing::eventually;
using agent::testing::TempDir;

// An agent server in this process and what it received.
class Agent {
 public:
  explicit Agent(const std::string& path)
      : server_(agent::testing::start_server(path, received_)) {}
  void stop() { server_->stop(); }
  std::vector<training::Step> steps() { return received_.steps(); }
  std::vector<training::RankEvent> events() { return received_.events(); }
  // Wait until `n` steps / an event of `kind` arrived (eventually()).
  bool wait_steps(std::size_t n) {
    return eventually([&] { return received_.step_count() >= n; });
  }
  bool wait_event(const std::string& kind) {
    return eventually([&] { return received_.count_events(kind) > 0; });
  }

 private:
  agent::testing::Received received_;  // before server_: outlives the server's thread
  std::unique_ptr<agent::AgentServer> server_;
};

struct Warnings {
  std::vector<std::string> lines;
  std::function<void(std::string_view)> sink() {
    return [this](std::string_view l) { lines.emplace_back(l); };
  }
};

MonitorOptions options_for(const std::string& path, Warnings& w) {
  MonitorOptions o;
  o.socket_path = path;
  o.on_warning = w.sink();
  o.min_backoff = 10ms;
  o.max_backoff = 20ms;
  o.write_interval = 0ms;  // the tests follow each step to the agent
  return o;
}

// A test whose Monitor is given the socket an agent already listens on.
class MonitorWithAgent : public ::testing::Test {
 public:
  MonitorOptions options() { return options_for(dir.file("a.sock"), w); }

  TempDir dir;
  Agent agent{dir.file("a.sock")};
  Warnings w;
};

TEST_F(MonitorWithAgent, HelloCarriesIdentityFromTheEnvironmentAndOptions) {
  ::setenv("RANK", "3", 1);
  ::setenv("LOCAL_RANK", "1", 1);
  ::setenv("WORLD_SIZE", "8", 1);
  MonitorOptions o = options();
  o.device = "cuda:1";
  o.torch_version = "1.13.1";
  Monitor mon = Monitor::start(o);
  ::unsetenv("RANK");
  ::unsetenv("LOCAL_RANK");
  ::unsetenv("WORLD_SIZE");
  ASSERT_TRUE(mon.active());
  mon.step();
  mon.close();
  ASSERT_TRUE(agent.wait_event("bye"));
  const auto events = agent.events();
  ASSERT_EQ(events.front().kind, "hello");
  const auto hello = nlohmann::json::parse(events.front().detail);
  EXPECT_EQ(hello["pid"], ::getpid());
  EXPECT_EQ(hello["rank"], 3);
  EXPECT_EQ(hello["local_rank"], 1);
  EXPECT_EQ(hello["world_size"], 8);
  EXPECT_EQ(hello["device"], "cuda:1");
  EXPECT_EQ(hello["torch_version"], "1.13.1");
  EXPECT_TRUE(hello["hostname"].is_string());
  const auto steps = agent.steps();
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].rank, 3);
  EXPECT_EQ(steps[0].device, "cuda:1");
  EXPECT_TRUE(w.lines.empty());
}

TEST_F(MonitorWithAgent, PlainStepsAreBoundariesAndCountTheDataWait) {
  const auto begun = std::chrono::steady_clock::now();
  Monitor mon = Monitor::start(options());
  for (int i = 0; i < 3; ++i) {
    const int batch = mon.fetch([&] {
      std::this_thread::sleep_for(20ms);
      return i;
    });
    EXPECT_EQ(batch, i);
    std::this_thread::sleep_for(10ms);  // the "training"
    mon.step();
  }
  // Each step is measured within the loop that ran it, however slowly that ran.
  const std::chrono::duration<double> loop = std::chrono::steady_clock::now() - begun;
  mon.close();
  ASSERT_TRUE(agent.wait_steps(3));
  const auto steps = agent.steps();
  for (int i = 0; i < 3; ++i) {
    const auto& s = steps[i];
    EXPECT_EQ(s.step, i);
    EXPECT_GE(s.data_wait_s, 0.019);
    EXPECT_GE(s.cpu_step_s, *s.data_wait_s + 0.009);
    EXPECT_LE(s.cpu_step_s, loop.count());
    EXPECT_NEAR(s.t_end_s - s.t_start_s, s.cpu_step_s, 1e-6);  // epoch seconds: ~2e-7 apart
    EXPECT_FALSE(s.gpu_step_s);
    EXPECT_FALSE(s.allocated_bytes);
    if (i > 0) {
      EXPECT_EQ(s.t_start_s, steps[i - 1].t_end_s);  // contiguous
    }
  }
  EXPECT_EQ(mon.stats().steps, 3u);  // still readable after close()
}

TEST_F(MonitorWithAgent, ScopedStepTimesItsBodyOnly) {
  Monitor mon = Monitor::start(options());
  std::vector<std::chrono::duration<double>> bodies;  // measured around each scoped step
  for (int i = 0; i < 2; ++i) {
    mon.data_wait_begin();
    std::this_thread::sleep_for(15ms);
    mon.data_wait_end();
    std::this_thread::sleep_for(50ms);  // outside the body: not counted
    const auto before = std::chrono::steady_clock::now();
    {
      auto s = mon.scoped_step();
      std::this_thread::sleep_for(10ms);
    }
    bodies.emplace_back(std::chrono::steady_clock::now() - before);
  }
  mon.set_gpu_step_seconds(0.004);
  { auto s = mon.scoped_step(); }
  mon.close();
  ASSERT_TRUE(agent.wait_steps(3));
  const auto steps = agent.steps();
  for (int i = 0; i < 2; ++i) {
    EXPECT_GE(steps[i].cpu_step_s, 0.009);
    EXPECT_LE(steps[i].cpu_step_s, bodies[i].count());  // not the 50 ms before the body
    EXPECT_GE(steps[i].data_wait_s, 0.014);
  }
  EXPECT_EQ(steps[2].gpu_step_s, 0.004);
  EXPECT_EQ(steps[2].data_wait_s, 0);
}

TEST_F(MonitorWithAgent, AllocatorStatsAtABoundedRateAndOnDemand) {
  MonitorOptions o = options();
  int reads = 0;
  o.allocator_source = [&] {
    AllocatorStats m;
    m.allocated_bytes = 1000 + reads++;
    m.num_ooms = 0;
    return m;
  };
  o.allocator_interval_s = 3600;
  Monitor mon = Monitor::start(o);
  mon.step();  // reads (first one is due)
  mon.step();  // not due
  EXPECT_FALSE(mon.allocator_stats_due());
  AllocatorStats given;
  given.reserved_bytes = 4096;
  mon.set_allocator_stats(given);
  mon.step();  // the given ones
  mon.close();
  ASSERT_TRUE(agent.wait_steps(3));
  const auto steps = agent.steps();
  EXPECT_EQ(reads, 1);
  EXPECT_EQ(steps[0].allocated_bytes, 1000);
  EXPECT_EQ(steps[0].num_ooms, 0);
  EXPECT_FALSE(steps[0].reserved_bytes);
  EXPECT_FALSE(steps[1].allocated_bytes);
  EXPECT_EQ(steps[2].reserved_bytes, 4096);
  EXPECT_FALSE(steps[2].allocated_bytes);
}

// Events that are done as soon as recorded; event k happened at k * 10 ms on the "GPU".
class InstantTimer : public GpuTimer {
 public:
  int record() override { return recorded++; }
  std::optional<double> elapsed(int from, int to) override { return (to - from) * 0.01; }
  int recorded = 0;
};

// `n` steps of a Monitor whose timer times at most one step per `interval_s`, then close(): what
// the agent received (all n, or a failure).
auto timed_steps(MonitorWithAgent& t, const std::shared_ptr<InstantTimer>& timer, double interval_s,
                 int n) {
  MonitorOptions o = t.options();
  o.gpu_timer = timer;
  o.gpu_interval_s = interval_s;
  Monitor mon = Monitor::start(o);
  for (int i = 0; i < n; ++i) mon.step();
  mon.close();
  EXPECT_TRUE(t.agent.wait_steps(static_cast<std::size_t>(n)));
  auto steps = t.agent.steps();
  EXPECT_EQ(steps.size(), static_cast<std::size_t>(n));
  return steps;
}

TEST_F(MonitorWithAgent, AGpuTimerTimesOneStepPerIntervalReadAStepLater) {
  auto timer = std::make_shared<InstantTimer>();
  const auto steps = timed_steps(*this, timer, 3600, 5);
  ASSERT_EQ(steps.size(), 5U);
  EXPECT_DOUBLE_EQ(steps[0].gpu_step_s.value_or(-1), 0.01);  // events 0 -> 1
  for (std::size_t i = 1; i < steps.size(); ++i) EXPECT_FALSE(steps[i].gpu_step_s) << i;
  EXPECT_EQ(timer->recorded, 2);  // one pair in the hour, not one a step
}

TEST_F(MonitorWithAgent, CloseSendsTheStepStillWaitingForItsGpuTime) {
  // Every step timed: the last one waits for a next step to read it, and close() sends it.
  const auto steps = timed_steps(*this, std::make_shared<InstantTimer>(), 0, 3);
  ASSERT_EQ(steps.size(), 3U);
  for (const auto& s : steps) EXPECT_DOUBLE_EQ(s.gpu_step_s.value_or(-1), 0.01);
}

TEST_F(MonitorWithAgent, OomIsARankEvent) {
  Monitor mon = Monitor::start(options());
  mon.step();
  mon.oom(1 << 20);
  mon.close();
  ASSERT_TRUE(agent.wait_event("bye"));
  bool found = false;
  for (const auto& e : agent.events()) {
    if (e.kind != "oom") continue;
    found = true;
    const auto j = nlohmann::json::parse(e.detail);
    EXPECT_EQ(j["step"], 1);
    EXPECT_EQ(j["requested_bytes"], 1 << 20);
  }
  EXPECT_TRUE(found);
}

TEST_F(MonitorWithAgent, StepsWaitForTheHandOverOrForKStepsAndAnOomWritesThem) {
  MonitorOptions o = options();
  o.write_interval = std::chrono::hours(1);
  Monitor mon = Monitor::start(o);
  mon.step();  // the first hand-over is due at once
  ASSERT_TRUE(agent.wait_steps(1));
  constexpr std::size_t k = client::HandOverSchedule::kSteps;
  for (std::size_t i = 1; i < k; ++i) mon.step();
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(agent.steps().size(), 1u);  // k - 1 wait in the clock
  mon.step();                           // k wait: handed over without the interval
  ASSERT_TRUE(agent.wait_steps(k + 1));
  mon.step();
  mon.step();
  mon.oom(1 << 20);  // the two steps, then the OOM, written now
  ASSERT_TRUE(agent.wait_event("oom"));
  const auto steps = agent.steps();
  ASSERT_EQ(steps.size(), k + 3);
  for (std::size_t i = 0; i < steps.size(); ++i)
    EXPECT_EQ(steps[i].step, static_cast<std::int64_t>(i));
  mon.close();
}

TEST(Monitor, HandsStepsOverOnTheSameScheduleAsThePythonClient) {
  EXPECT_EQ(MonitorOptions{}.write_interval, client::HandOverSchedule::kInterval);
}

TEST(Monitor, AgentAbsentThenAppearingGetsTheQueuedSteps) {
  TempDir dir;
  Warnings w;
  Monitor mon = Monitor::start(options_for(dir.file("late.sock"), w));
  ASSERT_TRUE(mon.active());  // a given socket: queued and retried
  ASSERT_EQ(w.lines.size(), 1u);
  EXPECT_NE(w.lines[0].find("cannot reach the agent"), std::string::npos) << w.lines[0];
  mon.step();
  mon.step();
  Agent agent(dir.file("late.sock"));
  std::this_thread::sleep_for(30ms);  // past the backoff
  mon.step();
  ASSERT_TRUE(agent.wait_steps(3));
  EXPECT_EQ(agent.steps()[0].step, 0);
  EXPECT_EQ(agent.events().front().kind, "hello");
  mon.close();
}

TEST(Monitor, AgentKilledGivesOneWarningAndStepsGoOn) {
  TempDir dir;
  Warnings w;
  Monitor mon = Monitor::start(options_for(dir.file("a.sock"), w));
  {
    Agent agent(dir.file("a.sock"));
    std::this_thread::sleep_for(30ms);
    mon.step();
    ASSERT_TRUE(agent.wait_steps(1));
    agent.stop();
  }
  w.lines.clear();
  for (int i = 0; i < 50; ++i) {
    mon.step();
    std::this_thread::sleep_for(1ms);
  }
  EXPECT_TRUE(mon.active());
  ASSERT_EQ(w.lines.size(), 1u);
  EXPECT_NE(w.lines[0].find("lost the agent"), std::string::npos) << w.lines[0];
  Agent again(dir.file("a.sock"));  // it comes back: the queued steps arrive
  std::this_thread::sleep_for(30ms);
  mon.step();
  EXPECT_TRUE(again.wait_steps(1));
  mon.close();
}

TEST_F(MonitorWithAgent, ForkedChildIsInert) {
  Monitor mon = Monitor::start(options());
  mon.step();
  const pid_t child = ::fork();
  if (child == 0) {
    bool ok = !mon.active();
    for (int i = 0; i < 10; ++i) {
      mon.step();
      auto s = mon.scoped_step();
    }
    mon.oom(1);
    mon.close();
    ::_exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  mon.step();
  mon.close();
  ASSERT_TRUE(agent.wait_event("bye"));
  const auto steps = agent.steps();
  ASSERT_EQ(steps.size(), 2u);
  for (const auto& s : steps) EXPECT_EQ(s.pid, ::getpid());
  int hellos = 0;
  for (const auto& e : agent.events()) hellos += e.kind == "hello";
  EXPECT_EQ(hellos, 1);
}

TEST(Monitor, NoAgentAndNoBinaryIsOneWarningAndANoOp) {
  TempDir dir;
  ::setenv("XDG_RUNTIME_DIR", dir.file("").c_str(), 1);
  ::setenv("GPUMON_BINARY", dir.file("missing").c_str(), 1);
  ::unsetenv("GPUMON_AGENT_SOCKET");
  Warnings w;
  MonitorOptions o;
  o.on_warning = w.sink();
  Monitor mon = Monitor::start(o);
  ::unsetenv("GPUMON_BINARY");
  ::unsetenv("XDG_RUNTIME_DIR");
  EXPECT_FALSE(mon.active());
  ASSERT_EQ(w.lines.size(), 1u);
  EXPECT_NE(w.lines[0].find("no gpumon binary"), std::string::npos) << w.lines[0];
  mon.step();
  { auto s = mon.scoped_step(); }
  EXPECT_EQ(mon.fetch([] { return 5; }), 5);
  mon.oom(1);
  mon.close();
  EXPECT_EQ(w.lines.size(), 1u);
}

// Another local user who can write to the default folder could plant the start lock as a link
// to a file of ours, or a fake agent: the client refuses the folder at once, starts nothing,
// touches nothing in it and says why in one warning.
TEST(Monitor, AForeignOrWorldWritableSocketFolderIsRefusedAtOnce) {
  TempDir dir;
  const std::string folder = dir.file("gpumon");
  const std::string victim = dir.file("victim");
  const std::string ran = dir.file("agent-ran");
  const std::string binary = dir.file("fake-gpumon");
  {
    std::FILE* f = std::fopen(binary.c_str(), "w");
    std::fprintf(f, "#!/bin/sh\ntouch %s\n", ran.c_str());
    std::fclose(f);
    ::chmod(binary.c_str(), 0700);
  }
  ASSERT_EQ(::mkdir(folder.c_str(), 0700), 0);
  ASSERT_EQ(::chmod(folder.c_str(), 0777), 0);
  ASSERT_EQ(::symlink(victim.c_str(), (folder + "/.agent-start.lock").c_str()), 0);
  ::setenv("XDG_RUNTIME_DIR", dir.path().c_str(), 1);
  ::setenv("GPUMON_BINARY", binary.c_str(), 1);
  ::unsetenv("GPUMON_AGENT_SOCKET");
  const auto start = [] {
    Warnings w;
    MonitorOptions o;
    o.on_warning = w.sink();
    Monitor mon = Monitor::start(o);
    EXPECT_FALSE(mon.active());
    return w.lines;
  };
  auto lines = start();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find(folder + " is yours but writable by other users (mode 0777)"),
            std::string::npos)
      << lines[0];
  EXPECT_NE(lines[0].find("XDG_RUNTIME_DIR"), std::string::npos) << lines[0];
  if (::geteuid() == 0) {  // as root the folder can be handed to another user
    ASSERT_EQ(::chown(folder.c_str(), 65534, 65534), 0);
    lines = start();
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_NE(lines[0].find(folder + " belongs to uid 65534 (mode 0777), not to you"),
              std::string::npos)
        << lines[0];
  }
  ::unsetenv("GPUMON_BINARY");
  ::unsetenv("XDG_RUNTIME_DIR");
  struct stat st {};
  EXPECT_NE(::stat(victim.c_str(), &st), 0) << "the planted link's target was created";
  EXPECT_NE(::stat(ran.c_str(), &st), 0) << "an agent was started";
}

// Even in a folder of ours, the lock is never opened through a link.
TEST(AgentLauncher, NeverOpensTheLockThroughALink) {
  TempDir dir;
  const std::string folder = dir.file("gpumon");
  const std::string victim = dir.file("victim");
  ASSERT_EQ(::mkdir(folder.c_str(), 0700), 0);
  ASSERT_EQ(::symlink(victim.c_str(), (folder + "/.agent-start.lock").c_str()), 0);
  const std::string why = client::start_agent_once("/bin/true", folder + "/agent.sock", "");
  EXPECT_NE(why.find("cannot open " + folder + "/.agent-start.lock"), std::string::npos) << why;
  struct stat st {};
  EXPECT_NE(::stat(victim.c_str(), &st), 0);
}

// The binary an agent is started from: GPUMON_BINARY alone when set; else the caller's own
// install's (a pip install's), ahead of PATH; else PATH; else the checkout's fallback.
TEST(AgentLauncher, FindsTheOwnInstallsBinaryBeforePath) {
  TempDir dir;
  auto executable = [&](const std::string& name) {
    const std::string path = dir.file(name);
    std::FILE* f = std::fopen(path.c_str(), "w");
    std::fclose(f);
    ::chmod(path.c_str(), 0700);
    return path;
  };
  const std::string own = executable("own"), fallback = executable("fallback");
  ASSERT_EQ(::mkdir(dir.file("path").c_str(), 0700), 0);
  const std::string on_path = executable("path/gpumon");
  const char* old_path = std::getenv("PATH");
  const std::string saved_path = old_path != nullptr ? old_path : "";
  ::unsetenv("GPUMON_BINARY");
  ::setenv("PATH", dir.file("path").c_str(), 1);
  EXPECT_EQ(client::find_gpumon_binary(fallback, own), own);
  EXPECT_EQ(client::find_gpumon_binary(fallback, dir.file("missing")), on_path);
  ::setenv("PATH", dir.file("nowhere").c_str(), 1);
  EXPECT_EQ(client::find_gpumon_binary(fallback, ""), fallback);
  ::setenv("GPUMON_BINARY", on_path.c_str(), 1);
  EXPECT_EQ(client::find_gpumon_binary(fallback, own), on_path);
  ::unsetenv("GPUMON_BINARY");
  ::setenv("PATH", saved_path.c_str(), 1);
}

TEST(Monitor, SocketFromTheEnvironment) {
  TempDir dir;
  Agent agent(dir.file("env.sock"));
  ::setenv("GPUMON_AGENT_SOCKET", dir.file("env.sock").c_str(), 1);
  Warnings w;
  MonitorOptions o;
  o.on_warning = w.sink();
  Monitor mon = Monitor::start(o);
  ::unsetenv("GPUMON_AGENT_SOCKET");
  EXPECT_EQ(mon.socket_path(), dir.file("env.sock"));
  mon.step();
  mon.close();
  EXPECT_TRUE(agent.wait_steps(1));
}

TEST_F(MonitorWithAgent, AThrowingAllocatorSourceDisablesWithOneWarning) {
  MonitorOptions o = options();
  o.allocator_source = []() -> AllocatorStats { throw std::runtime_error("boom"); };
  Monitor mon = Monitor::start(o);
  mon.step();
  mon.step();
  EXPECT_FALSE(mon.active());
  ASSERT_EQ(w.lines.size(), 1u);
  EXPECT_NE(w.lines[0].find("boom"), std::string::npos);
}

}  // namespace
}  // namespace gpumon
