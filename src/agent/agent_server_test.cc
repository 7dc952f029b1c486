// SPDX-License-Identifier: MIT
// The agent's socket over real Unix sockets: many clients, malformed and oversized input, a
// client dying mid-message, stop, the client's queue, reconnection and fork.
#include "agent/agent_server.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <map>
#include <thread>
#include <vector>

#include "agent/agent_client.h"
#include "agent/socket_path.h"
#include "agent/testing/agent_test_support.h"
#include "training/protocol.h"

namespace gpumon::agent {
namespace {

using namespace std::chrono_literals;

using testing::eventually;
using testing::Received;
using testing::start_server;
using testing::TempDir;

int raw_connect(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

void put(int fd, const std::string& s) {
  ASSERT_EQ(::send(fd, s.data(), s.size(), MSG_NOSIGNAL), static_cast<ssize_t>(s.size()));
}

std::string hello(int pid, int rank) {
  return R"({"type":"hello","pid":)" + std::to_string(pid) + R"(,"rank":)" + std::to_string(rank) +
         R"(,"local_rank":)" + std::to_string(rank) + R"(,"world_size":8,"device":"cuda:)" +
         std::to_string(rank) + "\"}\n";
}

std::string step(int n, double wait = 0.01) {
  const double t0 = 1764446400.0 + n;
  return R"({"type":"step","step":)" + std::to_string(n) + R"(,"t_start":)" + std::to_string(t0) +
         R"(,"t_end":)" + std::to_string(t0 + 0.5) +
         R"(,"cpu_step_s":0.5,"gpu_step_s":null,"data_wait_s":)" + std::to_string(wait) +
         R"(,"mem":null})" + "\n";
}

TEST(AgentServer, EightRanksSendInterleavedSteps) {
  TempDir dir;
  Received r;
  auto server = start_server(dir.file("agent.sock"), r);
  std::vector<int> fds;
  for (int rank = 0; rank < 8; ++rank) {
    fds.push_back(raw_connect(dir.file("agent.sock")));
    ASSERT_GE(fds.back(), 0);
    put(fds.back(), hello(1000 + rank, rank));
  }
  for (int n = 0; n < 50; ++n)
    for (int fd : fds) put(fd, step(n));
  ASSERT_TRUE(eventually([&] { return r.step_count() == 400; })) << r.step_count();
  std::map<std::int64_t, std::vector<std::int64_t>> by_rank;
  for (const auto& s : r.steps()) {
    by_rank[*s.rank].push_back(s.step);
    EXPECT_EQ(s.pid, 1000 + *s.rank);
    EXPECT_EQ(s.local_rank, s.rank);
    EXPECT_EQ(s.world_size, 8);
    EXPECT_EQ(s.device, "cuda:" + std::to_string(*s.rank));
    EXPECT_EQ(s.data_wait_s, 0.01);
    EXPECT_GT(s.received_ms, 0);
  }
  ASSERT_EQ(by_rank.size(), 8U);
  for (const auto& [rank, steps] : by_rank) {
    ASSERT_EQ(steps.size(), 50U) << rank;
    for (int n = 0; n < 50; ++n) EXPECT_EQ(steps[n], n);  // in order, none twice
  }
  for (int fd : fds) put(fd, "{\"type\":\"bye\"}\n");
  for (int fd : fds) ::close(fd);
  ASSERT_TRUE(eventually([&] { return server->stats().clients_now == 0; }));
  EXPECT_EQ(r.count_events("hello"), 8U);
  EXPECT_EQ(r.count_events("bye"), 8U);
  EXPECT_EQ(r.count_events("disconnect"), 0U);
  EXPECT_EQ(server->stats().clients_dropped, 0U);
  EXPECT_TRUE(eventually([&] { return server->idle_seconds() > 0; }));
}

TEST(AgentServer, ADeviceNamedAfterTheHelloReachesTheSinksAndLaterSteps) {
  TempDir dir;
  Received r;
  auto server = start_server(dir.file("agent.sock"), r);
  const int fd = raw_connect(dir.file("agent.sock"));
  ASSERT_GE(fd, 0);
  put(fd, R"({"type":"hello","pid":1234,"rank":0})"
          "\n");
  put(fd, step(0));
  put(fd, R"({"type":"device","device":"cpu","torch_version":"1.13.1"})"
          "\n");
  put(fd, step(1));
  ASSERT_TRUE(eventually([&] { return r.step_count() == 2; }));
  const auto steps = r.steps();
  EXPECT_EQ(steps[0].device, std::nullopt);
  EXPECT_EQ(steps[1].device, "cpu");
  ASSERT_EQ(r.count_events("device"), 1U);
  for (const auto& e : r.events())
    if (e.kind == "device") {
      ASSERT_TRUE(e.hello);
      EXPECT_EQ(e.hello->device, "cpu");
      EXPECT_EQ(e.hello->pid, 1234);
    }
  ::close(fd);
}

TEST(AgentServer, AnActionIsARankEventAndABadOneDropsTheClient) {
  TempDir dir;
  Received r;
  auto server = start_server(dir.file("agent.sock"), r);
  const int fd = raw_connect(dir.file("agent.sock"));
  ASSERT_GE(fd, 0);
  put(fd, hello(1234, 0));
  put(fd, R"({"type":"action","action":"oom_split","step":3,"micro_batch_size":16})"
          "\n");
  ASSERT_TRUE(eventually([&] { return r.count_events("action") == 1; }));
  for (const auto& e : r.events())
    if (e.kind == "action") {
      EXPECT_EQ(e.rank, 0);
      const auto a = training::action_of(e);
      ASSERT_TRUE(a) << e.detail;
      EXPECT_EQ(a->micro_batch_size, 16);
    }
  put(fd, R"({"type":"action","action":"oom_split","micro_batch_size":"big"})"
          "\n");
  ASSERT_TRUE(eventually([&] { return server->stats().clients_dropped == 1; }));
  EXPECT_EQ(r.count_events("action"), 1U);
  ::close(fd);
}

TEST(AgentServer, BadClientsAreDroppedAndTheOthersCarryOn) {
  TempDir dir;
  Received r;
  auto server = start_server(dir.file("agent.sock"), r);
  const int good = raw_connect(dir.file("agent.sock"));
  put(good, hello(1, 0));
  put(good, step(0));

  const int garbage = raw_connect(dir.file("agent.sock"));
  put(garbage, hello(2, 1) + "this is not json\n" + step(99));
  const int oversized = raw_connect(dir.file("agent.sock"));
  put(oversized, hello(3, 2) + std::string(training::kMaxMessageBytes + 10, 'x'));
  const int long_line = raw_connect(dir.file("agent.sock"));
  put(long_line, hello(4, 3) + R"({"type":"bye","pad":")" + std::string(5000, 'y') + "\"}\n");
  const int no_hello = raw_connect(dir.file("agent.sock"));
  put(no_hello, step(98));
  const int bad_field = raw_connect(dir.file("agent.sock"));
  put(bad_field, hello(5, 4) + R"({"type":"step","step":-1,"t_start":1,"t_end":2,)" +
                     R"("cpu_step_s":1})" + "\n");

  ASSERT_TRUE(eventually([&] { return server->stats().clients_dropped == 5; }))
      << server->stats().clients_dropped << " " << server->stats().last_error;
  // The dropped ones see their connection closed.
  char c;
  for (int fd : {garbage, oversized, long_line, no_hello, bad_field})
    EXPECT_EQ(::recv(fd, &c, 1, 0), 0);
  put(good, step(1));
  ASSERT_TRUE(eventually([&] { return r.step_count() == 2; }));
  const auto steps = r.steps();
  EXPECT_EQ(steps[0].step, 0);
  EXPECT_EQ(steps[1].step, 1);
  EXPECT_EQ(r.warning_count(), 5U);
  EXPECT_EQ(r.count_events("dropped"), 4U);  // the hello'd ones, with the reason
  EXPECT_EQ(r.count_events("disconnect"), 0U);
  bool reason_seen = false;
  for (const auto& e : r.events())
    reason_seen |= e.kind == "dropped" && e.detail.find(R"({"reason":"not JSON)") == 0;
  EXPECT_TRUE(reason_seen);
  // A hello names the process in the agent's own pid namespace too (this test's pid: the
  // sockets are this process's).
  std::size_t hellos = 0;
  for (const auto& e : r.events())
    if (e.kind == "hello") {
      ++hellos;
      EXPECT_EQ(e.peer_pid, ::getpid());
    }
  EXPECT_GT(hellos, 0U);
  for (int fd : {good, garbage, oversized, long_line, no_hello, bad_field}) ::close(fd);
}

TEST(AgentServer, AClientDyingMidMessageLosesOnlyThatMessage) {
  TempDir dir;
  Received r;
  auto server = start_server(dir.file("agent.sock"), r);
  const int fd = raw_connect(dir.file("agent.sock"));
  const std::string second = step(1);
  put(fd, hello(7, 0) + step(0) + second.substr(0, second.size() / 2));
  ASSERT_TRUE(eventually([&] { return r.step_count() == 1; }));
  ::close(fd);
  ASSERT_TRUE(eventually([&] { return r.count_events("disconnect") == 1; }));
  EXPECT_EQ(r.step_count(), 1U);
  EXPECT_EQ(server->stats().partial_at_close, 1U);
  EXPECT_EQ(server->stats().clients_dropped, 0U);
}

TEST(AgentServer, ReadsClientsOnItsClockSoTheirWritesWakeNoOneButAHangUpDoes) {
  TempDir dir;
  Received r;
  // Read at the hello, then not for a minute: only a hang-up brings the server round sooner.
  auto server = start_server(dir.file("agent.sock"), r, 256, std::chrono::minutes(1));
  const int fd = raw_connect(dir.file("agent.sock"));
  ASSERT_GE(fd, 0);
  put(fd, hello(7, 0));
  ASSERT_TRUE(eventually([&] { return r.count_events("hello") == 1; }));
  for (int n = 0; n < 100; ++n) put(fd, step(n));
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(r.step_count(), 0U) << "a client's write woke the server";
  ::close(fd);
  ASSERT_TRUE(eventually([&] { return r.step_count() == 100; })) << r.step_count();
  // The disconnect is recorded after the steps read: it may come a moment later.
  EXPECT_TRUE(eventually([&] { return r.count_events("disconnect") == 1U; }));
}

TEST(AgentServer, AClientSendingMoreThanOneReadTakesIsReadToTheEndWithoutWaiting) {
  TempDir dir;
  Received r;
  // One read a minute: a server that waited for its clock between capped reads would take
  // minutes for the rest; one that reads on at once takes milliseconds, however loaded.
  auto server = start_server(dir.file("agent.sock"), r, 256, 60s);
  const int fd = raw_connect(dir.file("agent.sock"));
  ASSERT_GE(fd, 0);
  std::string burst = hello(7, 0);
  for (int n = 0; n < 4000; ++n) burst += step(n);  // ~0.8 MB: several capped reads
  std::thread writer([&] { put(fd, burst); });
  // The hello wakes the server; its read is capped, and the rest follows at once.
  EXPECT_TRUE(eventually([&] { return r.step_count() == 4000; })) << r.step_count();
  writer.join();
  ::close(fd);
}

TEST(AgentServer, StopLeavesASocketAnotherServerBoundSince) {
  TempDir dir;
  Received r1, r2;
  const std::string path = dir.file("agent.sock");
  auto first = start_server(path, r1);
  ASSERT_EQ(::unlink(path.c_str()), 0);  // as prepare_listen_path() removes a stale socket
  auto second = start_server(path, r2);
  first->stop();
  const int fd = raw_connect(path);
  EXPECT_GE(fd, 0) << "the first server's stop removed the second's socket";
  if (fd >= 0) ::close(fd);
  second->stop();
  struct stat st {};
  EXPECT_NE(::stat(path.c_str(), &st), 0);
}

TEST(AgentServer, StopClosesClientsAndRemovesTheSocket) {
  TempDir dir;
  Received r;
  const std::string path = dir.file("agent.sock");
  // One read an hour: a stop that waited for the server's clock would outlast the test's time
  // limit; one that wakes the server returns at once, however loaded the machine.
  auto server = start_server(path, r, 256, std::chrono::hours(1));
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600);
  const int fd = raw_connect(path);
  put(fd, hello(9, 0));
  ASSERT_TRUE(eventually([&] { return r.count_events("hello") == 1; }));
  server->stop();
  EXPECT_EQ(r.count_events("disconnect"), 1U);
  EXPECT_NE(::stat(path.c_str(), &st), 0);
  char c;
  EXPECT_EQ(::recv(fd, &c, 1, 0), 0);
  ::close(fd);
  EXPECT_EQ(raw_connect(path), -1);
  server->stop();  // idempotent
}

// Reads what arrives on `fd` (the server pushes lines without being asked) until a whole line is
// there or `limit` passes: a long limit waits for a line, a short one checks that none comes.
std::string read_for(int fd, std::chrono::milliseconds limit) {
  std::string got;
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end && got.find('\n') == std::string::npos) {
    char buf[4096];
    const ssize_t n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n > 0)
      got.append(buf, static_cast<std::size_t>(n));
    else
      std::this_thread::sleep_for(2ms);
  }
  return got;
}

TEST(AgentServer, PushesTheLatestLineToHelloedClientsAndNewcomers) {
  TempDir dir;
  Received r;
  auto server = start_server(dir.file("a.sock"), r);
  const int a = raw_connect(server->socket_path());
  put(a, hello(1, 0));
  ASSERT_TRUE(eventually([&] { return r.count_events("hello") == 1; }));
  server->push(R"({"type":"findings","health_score":100,"findings":[]})");
  EXPECT_EQ(read_for(a, 60s), "{\"type\":\"findings\",\"health_score\":100,\"findings\":[]}\n");
  server->push("second");
  EXPECT_EQ(read_for(a, 60s), "second\n");
  const int b = raw_connect(server->socket_path());
  EXPECT_EQ(read_for(b, 100ms), "") << "nothing before the hello";
  put(b, hello(2, 1));
  EXPECT_EQ(read_for(b, 60s), "second\n") << "the latest line right after the hello";
  ::close(a);
  ::close(b);
  server->stop();
}

TEST(AgentServer, AClientThatNeverReadsLosesPushesAndNeverBlocksTheServer) {
  TempDir dir;
  Received r;
  auto server = start_server(dir.file("a.sock"), r);
  const int a = raw_connect(server->socket_path());
  put(a, hello(1, 0));
  ASSERT_TRUE(eventually([&] { return r.count_events("hello") == 1; }));
  const std::string big(4000, 'x');
  for (int i = 0; i < 400; ++i) {  // ~1.6 MB never read; the pause lets the server see each
    server->push(big + std::to_string(i));
    std::this_thread::sleep_for(1ms);
  }
  ASSERT_TRUE(eventually([&] {
    const auto st = server->stats();
    return st.push_dropped > 0;
  }));
  put(a, step(1));  // the server still reads it
  EXPECT_TRUE(eventually([&] { return r.step_count() == 1; }));
  ::close(a);
  server->stop();
}

// A rank that stops reading (closes) before a push reaches it: the push fails with EPIPE, and
// what the rank wrote after (its last steps, its bye) is still read. Under load the server
// read a rank's hello, the rank then wrote its steps and closed, and the push to it failed:
// serve --record lost the steps (the CI flake of serve_command_test's --record check).
TEST(AgentServer, APushToAClientThatClosedKeepsWhatItWrote) {
  TempDir dir;
  Received r;
  auto server = start_server(dir.file("a.sock"), r);
  server->push(R"({"type":"findings","health_score":100,"findings":[]})");
  const int a = raw_connect(server->socket_path());
  ASSERT_EQ(::shutdown(a, SHUT_RD), 0);  // the server's writes to it now fail with EPIPE
  put(a, hello(1, 0));
  ASSERT_TRUE(eventually([&] { return server->stats().pushed == 1; }));  // and it tried one
  put(a, step(0) + step(1) + step(2) + R"({"type":"bye"})" + "\n");
  ::close(a);
  EXPECT_TRUE(eventually([&] { return r.step_count() == 3 && r.count_events("bye") == 1; }))
      << r.step_count() << " steps";
  EXPECT_EQ(r.count_events("disconnect"), 0);
  server->stop();
}

TEST(AgentServer, RefusesClientsBeyondTheLimit) {
  TempDir dir;
  Received r;
  auto server = start_server(dir.file("agent.sock"), r, 2);
  const int a = raw_connect(dir.file("agent.sock"));
  const int b = raw_connect(dir.file("agent.sock"));
  ASSERT_TRUE(eventually([&] { return server->stats().clients_now == 2; }));
  const int c = raw_connect(dir.file("agent.sock"));
  ASSERT_TRUE(eventually([&] { return server->stats().clients_refused == 1; }));
  char byte;
  EXPECT_EQ(::recv(c, &byte, 1, 0), 0);
  for (int fd : {a, b, c}) ::close(fd);
}

TEST(SocketPath, PreparesAPrivateFolderAndRefusesWhatIsNotOurs) {
  TempDir dir;
  const std::string folder = dir.file("gpumon");
  const std::string path = folder + "/agent.sock";
  ASSERT_EQ(prepare_listen_path(path), "");
  struct stat st {};
  ASSERT_EQ(::stat(folder.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700);
  ::chmod(folder.c_str(), 0755);  // readable by others, nothing planted: made private again
  ASSERT_EQ(prepare_listen_path(path), "");
  ASSERT_EQ(::stat(folder.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700);
  ::chmod(folder.c_str(), 0777);  // others could have planted anything: refused
  EXPECT_NE(prepare_listen_path(path).find("writable by other users (mode 0777)"),
            std::string::npos);
  EXPECT_NE(check_socket_folder(path, false).find("writable by other users"), std::string::npos);
  ::chmod(folder.c_str(), 0700);
  EXPECT_EQ(check_socket_folder(dir.file("missing/agent.sock"), false), "");

  Received r;
  auto server = start_server(path, r);
  EXPECT_NE(prepare_listen_path(path).find("already listens"), std::string::npos);
  EXPECT_EQ(check_owned_socket(path), "");
  server.reset();

  // A stale socket (nobody listening) is replaced.
  {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    ::close(fd);
  }
  EXPECT_EQ(prepare_listen_path(path), "");
  EXPECT_NE(::stat(path.c_str(), &st), 0);

  const std::string file = dir.file("plain");
  ::close(::creat(file.c_str(), 0600));
  EXPECT_NE(prepare_listen_path(file).find("not a socket"), std::string::npos);
  EXPECT_NE(check_owned_socket(file).find("not a socket"), std::string::npos);
  EXPECT_NE(prepare_listen_path("/tmp/" + std::string(200, 'x')).find("too long"),
            std::string::npos);
  if (::geteuid() == 0) {  // as root we can hand the socket and the folder to someone else
    server = start_server(path, r);
    server->stop();  // removes the socket: bind a stale one owned by nobody instead
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    ::close(fd);
    ASSERT_EQ(::chown(path.c_str(), 65534, 65534), 0);
    EXPECT_NE(prepare_listen_path(path).find("not ours: refused"), std::string::npos);
    EXPECT_NE(check_owned_socket(path).find("not ours: refused"), std::string::npos);
    ::unlink(path.c_str());
    ASSERT_EQ(::chown(folder.c_str(), 65534, 65534), 0);
    EXPECT_NE(prepare_listen_path(path).find("belongs to uid 65534 (mode 0700), not to you"),
              std::string::npos);
  }
}

AgentClientOptions client_options(const std::string& path) {
  AgentClientOptions o;
  o.socket_path = path;
  o.min_backoff = 10ms;
  o.max_backoff = 40ms;
  o.max_queue_bytes = 64 * 1024;
  o.write_interval = 0ms;  // these tests follow every write; coalescing has its own test
  return o;
}

TEST(AgentClient, CoalescesWritesUntilTheIntervalOrAFlush) {
  TempDir dir;
  const std::string path = dir.file("agent.sock");
  Received r;
  auto server = start_server(path, r);
  AgentClientOptions o = client_options(path);
  o.write_interval = 1h;
  AgentClient client(o);
  client.set_hello(hello(getpid(), 0));
  EXPECT_TRUE(client.send(step(0)));  // the first send is due: connects and writes
  ASSERT_TRUE(eventually([&] { return r.step_count() == 1; }));
  for (int n = 1; n < 10; ++n) EXPECT_TRUE(client.send(step(n)));  // queued, not written
  EXPECT_GT(client.stats().queued_bytes, 0U);
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(r.step_count(), 1U);
  EXPECT_TRUE(client.flush());  // flush writes at once
  ASSERT_TRUE(eventually([&] { return r.step_count() == 10; }));
  EXPECT_EQ(client.stats().sent, 10U);
  client.close(1s);
  server->stop();
}

TEST(AgentClient, EnqueueWritesNothingUntilAFlushWritesTheBatch) {
  TempDir dir;
  const std::string path = dir.file("agent.sock");
  Received r;
  auto server = start_server(path, r);
  AgentClientOptions o = client_options(path);  // write_interval 0: send() would write each
  o.max_queue_bytes = 4096;
  AgentClient client(o);
  client.set_hello(hello(getpid(), 0));
  for (int n = 0; n < 10; ++n) EXPECT_TRUE(client.enqueue(step(n)));
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(r.step_count(), 0U);
  EXPECT_FALSE(client.stats().connected);  // not even connected yet
  EXPECT_TRUE(client.flush());
  ASSERT_TRUE(eventually([&] { return r.step_count() == 10; }));
  const auto steps = r.steps();
  EXPECT_EQ(steps.front().step, 0);
  EXPECT_EQ(steps.back().step, 9);
  // A full queue drops, and says so, as send() does.
  std::uint64_t queued = 0;
  while (client.enqueue(step(static_cast<int>(10 + queued)))) ++queued;
  EXPECT_LT(queued, 4096U);
  EXPECT_EQ(client.stats().dropped, 1U);
  client.close(1s);
  EXPECT_FALSE(client.enqueue(step(0)));
  server->stop();
}

TEST(AgentClient, QueuesWhileTheAgentIsAwayAndReconnects) {
  TempDir dir;
  const std::string path = dir.file("agent.sock");
  AgentClient client(client_options(path));
  client.set_hello(hello(getpid(), 0));
  for (int n = 0; n < 10; ++n) EXPECT_TRUE(client.send(step(n)));  // no agent yet: queued
  EXPECT_FALSE(client.stats().connected);
  EXPECT_GT(client.stats().queued_bytes, 0U);

  Received r;
  auto server = start_server(path, r);
  ASSERT_TRUE(eventually([&] { return client.flush(); }));
  ASSERT_TRUE(eventually([&] { return r.step_count() == 10; }));
  EXPECT_EQ(r.count_events("hello"), 1U);
  EXPECT_EQ(r.steps().front().rank, 0);

  server->stop();  // the agent goes away mid-run
  server.reset();
  for (int n = 10; n < 20; ++n) client.send(step(n));  // the first write after it breaks
  EXPECT_FALSE(client.stats().connected);
  EXPECT_EQ(client.stats().disconnects, 1U);

  Received r2;
  server = start_server(path, r2);
  ASSERT_TRUE(eventually([&] { return client.flush() && client.stats().connected; }));
  // The queued steps arrive, the last one last.
  ASSERT_TRUE(eventually([&] {
    const auto steps = r2.steps();
    return !steps.empty() && steps.back().step == 19;
  }));
  EXPECT_EQ(r2.count_events("hello"), 1U);  // the new connection starts with the hello
  const auto st = client.stats();
  EXPECT_EQ(st.connects, 2U);
  EXPECT_EQ(st.sent + st.dropped, 20U + 0U) << st.sent << " " << st.dropped;
  client.close(1s);
  EXPECT_FALSE(client.send(step(21)));
  server->stop();  // before r2, which its thread writes to, goes out of scope
}

TEST(AgentClient, KeepsTheLatestFindingsLineFromTheAgent) {
  TempDir dir;
  const std::string path = dir.file("agent.sock");
  Received r;
  auto server = start_server(path, r);
  server->push(R"({"type":"findings","health_score":100,"findings":[]})");
  AgentClient client(client_options(path));
  client.set_hello(hello(getpid(), 0));
  EXPECT_EQ(client.findings_seq(), 0U);
  ASSERT_TRUE(eventually([&] {
    client.flush();  // connects
    client.receive();
    return client.findings_seq() == 1;
  })) << "the latest line comes right after the hello";
  EXPECT_EQ(client.findings_line(), R"({"type":"findings","health_score":100,"findings":[]})");
  server->push("not findings: ignored");
  server->push(R"({"type":"findings","health_score":80,"findings":[{"id":"xid"}]})");
  ASSERT_TRUE(eventually([&] {
    client.send(step(1));  // send() reads too, at most every kReceiveInterval
    return client.findings_seq() == 2;
  }));
  EXPECT_NE(client.findings_line().find("\"health_score\":80"), std::string::npos);
  server->stop();  // the agent goes: its findings are stale
  ASSERT_TRUE(eventually([&] {
    client.receive();
    client.send(step(2));
    return client.findings_seq() == 3;
  }));
  EXPECT_EQ(client.findings_line(), "");
}

TEST(AgentClient, DropsAndCountsWhenTheQueueIsFull) {
  TempDir dir;
  AgentClient client(client_options(dir.file("agent.sock")));
  int accepted = 0;
  for (int n = 0; n < 2000; ++n) accepted += client.send(step(n));
  const auto st = client.stats();
  EXPECT_LT(accepted, 2000);
  EXPECT_EQ(st.dropped, static_cast<std::uint64_t>(2000 - accepted));
  EXPECT_LE(st.queued_bytes, 64U * 1024U);
  EXPECT_FALSE(
      client.send(std::string(training::kMaxMessageBytes, 'x')));  // longer than the protocol
}

TEST(AgentClient, AForkedChildSendsNothingAndDoesNotHoldTheConnection) {
  TempDir dir;
  const std::string path = dir.file("agent.sock");
  Received r;
  auto server = start_server(path, r);
  AgentClient client(client_options(path));
  client.set_hello(hello(getpid(), 0));
  ASSERT_TRUE(client.send(step(0)));
  ASSERT_TRUE(eventually([&] { return r.step_count() == 1; }));
  const pid_t child = ::fork();
  if (child == 0) {
    // A DataLoader worker: the client is inert and the inherited socket is already closed.
    const bool sent = client.send(step(1000));
    const bool flushed = client.flush();
    _exit(sent || flushed || client.in_owner_process() ? 1 : 0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  ASSERT_TRUE(client.send(step(1)));
  ASSERT_TRUE(eventually([&] { return r.step_count() == 2; }));
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(r.step_count(), 2U);
  EXPECT_EQ(r.steps()[1].step, 1);
  EXPECT_EQ(r.count_events("hello"), 1U);
  client.close(1s);
  // Closing in the parent ends the connection: no copy survives in the (exited) child.
  ASSERT_TRUE(eventually([&] { return server->stats().clients_now == 0; }));
}

}  // namespace
}  // namespace gpumon::agent
