// SPDX-License-Identifier: MIT
#include "http/loopback_peer.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <unistd.h>

namespace gpumon::detail {
namespace {

sockaddr_in v4(const char* address, std::uint16_t port = 0) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  inet_pton(AF_INET, address, &a.sin_addr);
  return a;
}

sockaddr_in6 v6(const char* address) {
  sockaddr_in6 a{};
  a.sin6_family = AF_INET6;
  inet_pton(AF_INET6, address, &a.sin6_addr);
  return a;
}

const sockaddr* as_sockaddr(const auto& a) {
  return reinterpret_cast<const sockaddr*>(&a);
}

TEST(LoopbackPeer, TellsLoopbackAddresses) {
  EXPECT_TRUE(is_loopback(as_sockaddr(v4("127.0.0.1"))));
  EXPECT_TRUE(is_loopback(as_sockaddr(v4("127.3.2.1"))));
  EXPECT_TRUE(is_loopback(as_sockaddr(v6("::1"))));
  EXPECT_TRUE(is_loopback(as_sockaddr(v6("::ffff:127.0.0.1"))));
  EXPECT_FALSE(is_loopback(as_sockaddr(v4("10.0.0.1"))));
  EXPECT_FALSE(is_loopback(as_sockaddr(v6("::ffff:10.0.0.1"))));
  EXPECT_FALSE(is_loopback(as_sockaddr(v6("fe80::1"))));
  EXPECT_FALSE(is_loopback(nullptr));
}

// This process's own connection: the kernel names this process's user.
TEST(LoopbackPeer, FindsTheUserOfALoopbackConnection) {
  const int server = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in bound = v4("127.0.0.1");
  ASSERT_EQ(bind(server, as_sockaddr(bound), sizeof bound), 0);
  ASSERT_EQ(listen(server, 1), 0);
  socklen_t len = sizeof bound;
  getsockname(server, reinterpret_cast<sockaddr*>(&bound), &len);
  const int client = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_EQ(connect(client, as_sockaddr(bound), sizeof bound), 0);
  sockaddr_in from{};
  len = sizeof from;
  getsockname(client, reinterpret_cast<sockaddr*>(&from), &len);
  EXPECT_EQ(loopback_peer_uid(as_sockaddr(from), as_sockaddr(bound)), geteuid());
  sockaddr_in elsewhere = v4("127.0.0.1", static_cast<std::uint16_t>(ntohs(bound.sin_port) + 1));
  EXPECT_EQ(loopback_peer_uid(as_sockaddr(from), as_sockaddr(elsewhere)), std::nullopt);
  EXPECT_EQ(loopback_peer_uid(as_sockaddr(v4("10.0.0.1", 5)), as_sockaddr(bound)), std::nullopt);
  close(client);
  close(server);
}

}  // namespace
}  // namespace gpumon::detail
