// SPDX-License-Identifier: MIT
// The server end to end over loopback: routes, methods, headers, limits.
#include "http/http_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

#include "http/test_client.h"
#include "http/test_server.h"
#include "util/testing/eventually.h"

namespace gpumon {
namespace {

using testing::kExposition;
using testing::kMetricsType;
using testing::request;
using testing::TestServer;

TEST(HttpServer, ServesRoutesWithTheirContentType) {
  TestServer t;
  ASSERT_EQ(t.start(), "");
  ASSERT_NE(t.port(), 0);
  auto reply = request(t.port(), "/metrics?x=1&name=a%20b", "Accept: text/plain\r\n");
  EXPECT_EQ(reply.status, 200);
  EXPECT_EQ(reply.headers["content-type"], kMetricsType);
  EXPECT_EQ(reply.body, kExposition);
  EXPECT_EQ(reply.headers["x-content-type-options"], "nosniff");
  EXPECT_EQ(reply.headers["x-frame-options"], "deny");
  EXPECT_EQ(reply.headers["cache-control"], "no-store");
  const auto seen = t.last_request();
  EXPECT_EQ(seen.method, "GET");
  EXPECT_EQ(seen.path, "/metrics");
  EXPECT_EQ(seen.query.at("name"), "a b");
  EXPECT_EQ(seen.header("accept"), "text/plain");
  EXPECT_EQ(seen.remote_address, "127.0.0.1");

  reply = request(t.port(), "/");
  EXPECT_EQ(reply.headers["content-type"], "text/html; charset=utf-8");
  EXPECT_EQ(reply.headers["cache-control"], "max-age=60");  // the handler's own wins
  EXPECT_EQ(t.server().security_warning(), "");
}

TEST(HttpServer, UnknownPathIs404AndCounted) {
  TestServer t;
  ASSERT_EQ(t.start(), "");
  EXPECT_EQ(request(t.port(), "/nope").status, 404);
  EXPECT_EQ(request(t.port(), "/metrics/").status, 404);
  EXPECT_EQ(request(t.port(), "/metrics").status, 200);
  const auto counters = t.server().counters();
  EXPECT_EQ(counters->responses().at(404), 2u);
  EXPECT_EQ(counters->responses().at(200), 1u);
  EXPECT_EQ(counters->rejections().at("not_found"), 2u);
}

TEST(HttpServer, OnlyGetAndHead) {
  TestServer t;
  ASSERT_EQ(t.start(), "");
  for (const char* method : {"POST", "PUT", "DELETE", "OPTIONS", "TRACE", "BREW"}) {
    auto reply = request(t.port(), "/metrics", "", method);
    EXPECT_EQ(reply.status, 405) << method;
    EXPECT_EQ(reply.headers["allow"], "GET, HEAD") << method;
  }
  auto head = request(t.port(), "/metrics", "", "HEAD");
  EXPECT_EQ(head.status, 200);
  EXPECT_EQ(head.headers["content-type"], kMetricsType);
  EXPECT_EQ(head.headers["content-length"], std::to_string(kExposition.size()));
  EXPECT_EQ(head.body, "");
  EXPECT_EQ(t.server().counters()->rejections().at("method"), 6u);
}

TEST(HttpServer, BodyAndRangeAreRefused) {
  TestServer t;
  ASSERT_EQ(t.start(), "");
  EXPECT_EQ(request(t.port(), "/metrics", "Content-Length: 5\r\n\r\nhello").status, 400);
  EXPECT_EQ(request(t.port(), "/metrics", "Transfer-Encoding: chunked\r\n\r\n-2\r\n").status, 400);
  auto post = request(t.port(), "/metrics", "Transfer-Encoding: chunked\r\n\r\n-2\r\n", "POST");
  EXPECT_EQ(post.status, 405);
  EXPECT_EQ(request(t.port(), "/metrics", "Content-Length: 0\r\n").status, 200);
  EXPECT_EQ(request(t.port(), "/metrics", "Range: bytes=0-1\r\n").status, 416);
}

TEST(HttpServer, HandlerExceptionIs500) {
  TestServer t;
  ASSERT_EQ(t.start(), "");
  EXPECT_EQ(request(t.port(), "/throw").status, 500);
  EXPECT_EQ(request(t.port(), "/metrics").status, 200);
}

TEST(HttpServer, ConcurrentLimitAnswers503) {
  ServerOptions options;
  options.threads = 4;
  options.max_in_flight = 2;
  TestServer t(options);
  ASSERT_EQ(t.start(), "");
  std::vector<std::thread> slow;
  std::vector<int> statuses(2);
  struct Join {
    TestServer& t;
    std::vector<std::thread>& threads;
    ~Join() {
      t.release();
      for (auto& th : threads) th.join();
    }
  } join{t, slow};
  // One after the other: a worker busy in a handler accepts no new connection, so the second
  // lands on another worker.
  for (int i = 0; i < 2; ++i) {
    slow.emplace_back([&, i] { statuses[i] = request(t.port(), "/slow").status; });
    ASSERT_TRUE(testing_util::eventually([&] { return t.slow_waiting() == i + 1; }));
  }
  ASSERT_EQ(t.slow_waiting(), 2);
  auto busy = request(t.port(), "/metrics");
  EXPECT_EQ(busy.status, 503);
  EXPECT_EQ(busy.body, "Limit of concurrent requests reached\n");
  t.release();
  for (auto& th : slow) th.join();
  slow.clear();
  EXPECT_EQ(statuses, (std::vector<int>{200, 200}));
  EXPECT_EQ(request(t.port(), "/metrics").status, 200);
  EXPECT_EQ(t.server().counters()->rejections().at("busy"), 1u);
}

TEST(HttpServer, ListensOnIpv6Loopback) {
  ServerOptions options;
  options.listen_address = "[::1]:0";
  TestServer t(options);
  const auto error = t.start();
  if (error.find("Address family not supported") != std::string::npos ||
      error.find("Cannot assign") != std::string::npos) {
    GTEST_SKIP() << "no IPv6 here: " << error;
  }
  ASSERT_EQ(error, "");
  EXPECT_NE(t.port(), 0);
  EXPECT_EQ(t.server().security_warning(), "");
  const int fd = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in6 to{};
  to.sin6_family = AF_INET6;
  to.sin6_port = htons(t.port());
  to.sin6_addr = in6addr_loopback;
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to), 0);
  const std::string get = "GET /metrics HTTP/1.1\r\nHost: [::1]\r\nConnection: close\r\n\r\n";
  ASSERT_EQ(::send(fd, get.data(), get.size(), MSG_NOSIGNAL), static_cast<ssize_t>(get.size()));
  std::string raw;
  char buffer[4096];
  for (ssize_t n; (n = ::recv(fd, buffer, sizeof buffer, 0)) > 0;) raw.append(buffer, n);
  ::close(fd);
  EXPECT_EQ(testing::parse_reply(raw).status, 200);
  EXPECT_EQ(t.last_request().remote_address, "::1");
}

TEST(HttpServer, PortInUseIsAClearError) {
  TestServer first;
  ASSERT_EQ(first.start(), "");
  ServerOptions options;
  options.listen_address = "127.0.0.1:" + std::to_string(first.port());
  TestServer second(options);
  const auto error = second.start();
  EXPECT_NE(error.find("cannot listen on 127.0.0.1:" + std::to_string(first.port())),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("in use"), std::string::npos) << error;
}

TEST(HttpServer, BadListenAddressAndWebConfigFailAtStart) {
  ServerOptions options;
  options.listen_address = "nowhere";
  EXPECT_NE(TestServer(options).start().find("bad listen address 'nowhere'"), std::string::npos);
  options.listen_address = "127.0.0.1:0";
  options.web_config_file = "/nonexistent/web.yml";
  EXPECT_NE(TestServer(options).start().find("/nonexistent/web.yml: cannot read"),
            std::string::npos);
}

TEST(HttpServer, WarnsBeyondLoopbackWithoutTlsOrAuth) {
  ServerOptions options;
  options.listen_address = "0.0.0.0:0";
  TestServer t(options);
  ASSERT_EQ(t.start(), "");
  const auto warning = t.server().security_warning();
  EXPECT_NE(warning.find("without TLS and without basic auth"), std::string::npos) << warning;
  EXPECT_EQ(insecure_listen_warning("0.0.0.0:9477", false, true, true), "");
  EXPECT_NE(insecure_listen_warning("0.0.0.0:9477", false, false, true).find("without TLS"),
            std::string::npos);
  EXPECT_NE(insecure_listen_warning(":9477", false, true, false).find("without basic auth"),
            std::string::npos);
  EXPECT_EQ(insecure_listen_warning("127.0.0.1:9477", true, false, false), "");
}

TEST(HttpServer, StopIsIdempotentAndRestartable) {
  TestServer t;
  ASSERT_EQ(t.start(), "");
  const auto port = t.port();
  t.server().stop();
  t.server().stop();
  EXPECT_EQ(testing::connect_loopback(port), -1);
  ASSERT_EQ(t.start(), "");
  EXPECT_EQ(request(t.port(), "/metrics").status, 200);
}

}  // namespace
}  // namespace gpumon
