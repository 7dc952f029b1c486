// SPDX-License-Identifier: MIT
// Hostile clients (docs/exporter.md, "HTTP server and security"; the reliability table C6,
// rows 10 and 11): the server answers or closes, /metrics keeps answering, memory stays bounded.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <thread>

#include "http/test_client.h"
#include "http/test_server.h"

namespace gpumon {
namespace {

using namespace std::chrono_literals;
using namespace std::string_literals;
using testing::exchange;
using testing::parse_reply;
using testing::request;
using testing::TestServer;

const std::string kGet = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";

// Still alive and answering after whatever the test did.
void expect_alive(const TestServer& t) {
  EXPECT_EQ(request(t.port(), "/metrics", "", "GET", "127.0.0.3").status, 200);
}

void set_send_timeout(int fd, std::chrono::milliseconds timeout) {
  timeval tv{0, static_cast<suseconds_t>(timeout.count() * 1000)};
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

// Silent connections are kept an hour here, so a server that starved /metrics behind the slow
// connections, or left the refused 65th one open, would hang the test (kReplyTimeout) rather
// than answer late: no bound on how long an answer takes, however loaded the machine.
TEST(HttpHostile, SlowlorisDoesNotStarveMetrics) {
  ServerOptions options;
  options.connection_timeout = std::chrono::hours(1);
  TestServer t(options);
  ASSERT_EQ(t.start(), "");
  std::vector<int> slow;
  // Each answers one request first, so the server has surely counted it before the 65th: a
  // connection still in the listen backlog, or between accept and MHD's start notice, is not
  // counted yet (on_accept in http_server.cc).
  const std::string first = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  for (int i = 0; i < 64; ++i) {
    const int fd = testing::connect_loopback(t.port());
    ASSERT_GE(fd, 0);
    char byte = 0;
    ASSERT_GT(send(fd, first.data(), first.size(), MSG_NOSIGNAL), 0);
    ASSERT_EQ(recv(fd, &byte, 1, 0), 1);
    ASSERT_GT(send(fd, "GET /metrics HTTP/1.1\r\n", 23, MSG_NOSIGNAL), 0);
    slow.push_back(fd);
  }
  std::atomic<bool> done{false};
  std::thread trickle([&] {
    while (!done) {
      for (int fd : slow) send(fd, "X-a: b\r\n", 8, MSG_NOSIGNAL | MSG_DONTWAIT);
      std::this_thread::sleep_for(100ms);
    }
  });
  for (int i = 0; i < 10; ++i) {
    // From another loopback address: the attacker has used up 127.0.0.1's per-IP quota.
    EXPECT_EQ(request(t.port(), "/metrics", "", "GET", "127.0.0.2").status, 200);
  }
  // The 65th connection from the attacker's address is closed by the server, not left open.
  std::string reply = "not read";
  EXPECT_TRUE(testing::closed_by_server(t.port(), kGet, &reply));
  EXPECT_EQ(reply, "");
  EXPECT_EQ(t.server().counters()->rejections()["per_address"], 1u) << "counted, not silent";
  done = true;
  trickle.join();
  for (int fd : slow) close(fd);
}

// On loopback every local user has the address 127.0.0.1: the limit counts per user there, so
// another user's 64 slow connections do not lock this user's scrapes out. Needs root, to be
// the other user in a child.
TEST(HttpHostile, AnotherLocalUsersConnectionsDoNotLockOutScrapes) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to connect as another user";
  int to_child[2], from_child[2];
  ASSERT_EQ(pipe(to_child), 0);
  ASSERT_EQ(pipe(from_child), 0);
  // Forked before the server's threads exist, so the child may allocate freely.
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // the other user: 64 slow connections, then a 65th that must be refused
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // a parent that failed early does not leave it behind
    char verdict = 'x';
    std::uint16_t port = 0;
    if (read(to_child[0], &port, sizeof port) == sizeof port && setgid(65534) == 0 &&
        setuid(65534) == 0) {
      // Each answers one request first, so the server has surely counted it before the 65th.
      const std::string first = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
      std::vector<int> slow;
      for (int i = 0; i < 64; ++i) {
        slow.push_back(testing::connect_loopback(port, "127.0.0.1"));
        char byte = 0;
        send(slow.back(), first.data(), first.size(), MSG_NOSIGNAL);
        recv(slow.back(), &byte, 1, 0);
        send(slow.back(), "GET /metrics HTTP/1.1\r\n", 23, MSG_NOSIGNAL);
      }
      std::string reply = "not read";
      verdict = testing::closed_by_server(port, kGet, &reply) && reply.empty() ? 'r' : 'a';
    }
    [[maybe_unused]] auto n = write(from_child[1], &verdict, 1);
    n = read(to_child[0], &verdict, 1);  // holds its connections until the parent is done
    _exit(0);
  }
  ServerOptions options;
  options.connection_timeout = std::chrono::hours(1);
  TestServer t(options);
  ASSERT_EQ(t.start(), "");
  const std::uint16_t port = t.port();
  ASSERT_EQ(write(to_child[1], &port, sizeof port), static_cast<ssize_t>(sizeof port));
  char verdict = 0;
  ASSERT_EQ(read(from_child[0], &verdict, 1), 1);
  EXPECT_EQ(verdict, 'r') << "the other user's 65th connection was not refused";
  for (int i = 0; i < 10; ++i) {
    // From the same address, as this user.
    EXPECT_EQ(request(t.port(), "/metrics", "", "GET", "127.0.0.1").status, 200);
  }
  EXPECT_EQ(t.server().counters()->rejections()["per_address"], 1u);
  [[maybe_unused]] auto n = write(to_child[1], "x", 1);
  int status = 0;
  waitpid(child, &status, 0);
  for (int fd : {to_child[0], to_child[1], from_child[0], from_child[1]}) close(fd);
}

TEST(HttpHostile, EndlessHeaderLineIsCutOffWithBoundedMemory) {
  TestServer t;
  ASSERT_EQ(t.start(), "");
  const auto rss_before = testing::resident_bytes();
  const int fd = testing::connect_loopback(t.port());
  ASSERT_GE(fd, 0);
  set_send_timeout(fd, 2000ms);
  const std::string head = "GET /metrics HTTP/1.1\r\nX-Long: ";
  ASSERT_GT(send(fd, head.data(), head.size(), MSG_NOSIGNAL), 0);
  const std::string chunk(64 * 1024, 'a');
  std::size_t sent = 0;
  while (sent < (64u << 20)) {
    const auto n = send(fd, chunk.data(), chunk.size(), MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<std::size_t>(n);
  }
  char buffer[512] = {};
  const auto n = recv(fd, buffer, sizeof buffer - 1, 0);
  close(fd);
  EXPECT_LT(sent, 64u << 20) << "the server read 64 MiB of one header line";
  // libmicrohttpd answers 431 once its 32 KiB buffer is full; what was sent beyond that sits
  // in the kernel's socket buffers (a few MiB on loopback).
  ASSERT_GT(n, 0);
  EXPECT_EQ(parse_reply(buffer).status, 431) << buffer;
  EXPECT_LT(testing::resident_bytes(), rss_before + (16u << 20));
  expect_alive(t);
}

TEST(HttpHostile, TenThousandHeaderLines) {
  TestServer t;
  ASSERT_EQ(t.start(), "");
  std::string req = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  for (int i = 0; i < 10000; ++i) req += "X-H" + std::to_string(i) + ": v\r\n";
  req += "\r\n";
  const auto reply = parse_reply(exchange(t.port(), req));
  EXPECT_EQ(reply.status, 431) << reply.raw.substr(0, 100);
  expect_alive(t);
}

TEST(HttpHostile, HugeUris) {
  TestServer t;
  ASSERT_EQ(t.start(), "");
  // Beyond the header buffer: libmicrohttpd refuses it itself.
  auto reply = request(t.port(), "/metrics?a=" + std::string(100000, 'a'));
  EXPECT_EQ(reply.status / 100, 4) << reply.raw.substr(0, 100);
  // Within the buffer but beyond max_uri_bytes: the guard's 414.
  reply = request(t.port(), "/metrics?a=" + std::string(3000, 'a'));
  EXPECT_EQ(reply.status, 414);
  EXPECT_EQ(request(t.port(), "/" + std::string(3000, 'm')).status, 414);
  expect_alive(t);
}

TEST(HttpHostile, ManyRangesDoNotAmplify) {
  TestServer t;
  ASSERT_EQ(t.start(), "");
  std::string ranges = "Range: bytes=0-";
  for (int i = 0; i < 2000; ++i) ranges += ",0-";
  const auto reply = request(t.port(), "/big", ranges + "\r\n");
  EXPECT_EQ(reply.status, 416);
  EXPECT_LT(reply.raw.size(), 1024u);
  expect_alive(t);
}

TEST(HttpHostile, PipelinedRequestsAnswerInOrder) {
  TestServer t;
  ASSERT_EQ(t.start(), "");
  const std::string keep = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  const std::string head = "HEAD / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  const std::string raw =
      exchange(t.port(), keep + head + "GET /nope HTTP/1.1\r\nHost: x\r\n\r\n" + kGet);
  std::vector<int> statuses;
  for (std::size_t at = raw.find("HTTP/1.1 "); at != std::string::npos;
       at = raw.find("HTTP/1.1 ", at + 1)) {
    statuses.push_back(std::atoi(raw.c_str() + at + 9));
  }
  EXPECT_EQ(statuses, (std::vector<int>{200, 200, 404, 200})) << raw;
}

TEST(HttpHostile, NulBytesAndHttp09) {
  TestServer t;
  ASSERT_EQ(t.start(), "");
  auto send_raw = [&](const std::string& req) { return parse_reply(exchange(t.port(), req)); };
  // libmicrohttpd 0.9.75 ends the path and header values at a NUL: the path no longer matches.
  EXPECT_EQ(send_raw("GET /met\0rics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"s).status,
            404);
  // A header value is cut at the NUL; nothing after it reaches the handler.
  auto reply =
      send_raw("GET /metrics HTTP/1.1\r\nHost: x\r\nX-A: a\0b\r\nConnection: close\r\n\r\n"s);
  EXPECT_EQ(reply.status, 200);
  EXPECT_EQ(t.last_request().header("x-a"), "a");
  // HTTP/0.9 (no version) is a 400; no HTTP/0.9 bare body is ever sent.
  reply = send_raw("GET /metrics\r\n\r\n");
  EXPECT_EQ(reply.status, 400);
  EXPECT_EQ(reply.raw.find("gpumon_up"), std::string::npos);
  EXPECT_EQ(send_raw("GET\r\n\r\n").raw, "");  // closed
  // Never answered (a second's look: only a slow machine could make this pass falsely).
  EXPECT_EQ(parse_reply(exchange(t.port(), "\0\0\0\0\r\n\r\n"s, 1000ms)).status, 0);
  EXPECT_EQ(send_raw("GET /metrics HTTP/2.0\r\n\r\n").status, 505);
  expect_alive(t);
}

TEST(HttpHostile, ClientClosingMidResponse) {
  TestServer t;
  ASSERT_EQ(t.start(), "");
  for (int i = 0; i < 20; ++i) {
    const int fd = testing::connect_loopback(t.port());
    ASSERT_GE(fd, 0);
    const std::string req = "GET /big HTTP/1.1\r\nHost: x\r\n\r\n";
    ASSERT_GT(send(fd, req.data(), req.size(), MSG_NOSIGNAL), 0);
    char buffer[4096];
    ASSERT_GT(recv(fd, buffer, sizeof buffer, 0), 0);
    if (i % 2) {  // half reset the connection, half close it
      linger l{1, 0};
      setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
    }
    close(fd);
  }
  expect_alive(t);
  EXPECT_EQ(request(t.port(), "/big").body.size(), 8u << 20);
}

}  // namespace
}  // namespace gpumon
