// SPDX-License-Identifier: MIT
#include "http/listen_address.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>

namespace gpumon {
namespace {

TEST(ListenAddress, Ipv4LoopbackDefault) {
  ListenAddress a;
  ASSERT_EQ(parse_listen_address("127.0.0.1:9477", a), "");
  EXPECT_FALSE(a.ipv6);
  EXPECT_TRUE(a.loopback);
  EXPECT_FALSE(a.any);
  const auto* in = reinterpret_cast<const sockaddr_in*>(&a.address);
  EXPECT_EQ(in->sin_family, AF_INET);
  EXPECT_EQ(ntohs(in->sin_port), 9477);
}

TEST(ListenAddress, Ipv6InBrackets) {
  ListenAddress a;
  ASSERT_EQ(parse_listen_address("[::1]:9477", a), "");
  EXPECT_TRUE(a.ipv6);
  EXPECT_TRUE(a.loopback);
  const auto* in = reinterpret_cast<const sockaddr_in6*>(&a.address);
  EXPECT_EQ(in->sin6_family, AF_INET6);
  EXPECT_EQ(ntohs(in->sin6_port), 9477);
}

TEST(ListenAddress, EmptyHostMeansEveryInterface) {
  ListenAddress a;
  ASSERT_EQ(parse_listen_address(":9477", a), "");
  EXPECT_TRUE(a.any);
  EXPECT_FALSE(a.loopback);
  ASSERT_EQ(parse_listen_address("0.0.0.0:0", a), "");
  EXPECT_TRUE(a.any);
  ASSERT_EQ(parse_listen_address("localhost:1", a), "");
  EXPECT_TRUE(a.loopback);
  ASSERT_EQ(parse_listen_address("10.1.2.3:1", a), "");
  EXPECT_FALSE(a.loopback);
}

TEST(ListenAddress, ErrorsNameTheValue) {
  ListenAddress a;
  EXPECT_NE(parse_listen_address("9477", a).find("'9477'"), std::string::npos);
  EXPECT_NE(parse_listen_address("127.0.0.1:99999", a).find("0 to 65535"), std::string::npos);
  EXPECT_NE(parse_listen_address("127.0.0.1:x", a), "");
  EXPECT_NE(parse_listen_address("::1:9477", a).find("brackets"), std::string::npos);
  EXPECT_NE(parse_listen_address("[::1]9477", a), "");
  EXPECT_NE(parse_listen_address("example.com:80", a).find("not an IPv4"), std::string::npos);
}

}  // namespace
}  // namespace gpumon
