// SPDX-License-Identifier: MIT
#include "http/listen_address.h"

#include <arpa/inet.h>

#include <charconv>
#include <cstring>

namespace gpumon {

std::string parse_listen_address(const std::string& text, ListenAddress& out) {
  out = ListenAddress{};
  const std::string bad = "bad listen address '" + text + "': ";
  std::string host;
  std::string port_text;
  if (!text.empty() && text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      return bad + "expected [IPv6]:port";
    }
    host = text.substr(1, close - 1);
    port_text = text.substr(close + 2);
    out.ipv6 = true;
  } else {
    const auto colon = text.rfind(':');
    if (colon == std::string::npos) return bad + "expected host:port";
    host = text.substr(0, colon);
    port_text = text.substr(colon + 1);
    if (host.find(':') != std::string::npos) return bad + "put an IPv6 address in brackets";
  }
  unsigned port = 0;
  const char* end = port_text.data() + port_text.size();
  auto [ptr, ec] = std::from_chars(port_text.data(), end, port);
  if (port_text.empty() || ec != std::errc() || ptr != end || port > 65535) {
    return bad + "the port must be a number from 0 to 65535";
  }
  if (host == "localhost") host = "127.0.0.1";

  if (out.ipv6) {
    auto* a6 = reinterpret_cast<sockaddr_in6*>(&out.address);
    a6->sin6_family = AF_INET6;
    a6->sin6_port = htons(static_cast<uint16_t>(port));
    if (inet_pton(AF_INET6, host.c_str(), &a6->sin6_addr) != 1) {
      return bad + "'" + host + "' is not an IPv6 address";
    }
    out.loopback = IN6_IS_ADDR_LOOPBACK(&a6->sin6_addr);
    out.any = IN6_IS_ADDR_UNSPECIFIED(&a6->sin6_addr);
    return "";
  }
  if (host.empty()) {
    // ":9477" listens everywhere, as exporters do; a dual-stack IPv6 socket covers IPv4 too.
    auto* a6 = reinterpret_cast<sockaddr_in6*>(&out.address);
    a6->sin6_family = AF_INET6;
    a6->sin6_port = htons(static_cast<uint16_t>(port));
    a6->sin6_addr = in6addr_any;
    out.ipv6 = true;
    out.any = true;
    return "";
  }
  auto* a4 = reinterpret_cast<sockaddr_in*>(&out.address);
  a4->sin_family = AF_INET;
  a4->sin_port = htons(static_cast<uint16_t>(port));
  if (inet_pton(AF_INET, host.c_str(), &a4->sin_addr) != 1) {
    return bad + "'" + host + "' is not an IPv4 address (names other than localhost are not " +
           "resolved)";
  }
  out.loopback = (ntohl(a4->sin_addr.s_addr) >> 24) == 127;
  out.any = a4->sin_addr.s_addr == htonl(INADDR_ANY);
  return "";
}

}  // namespace gpumon
