// SPDX-License-Identifier: MIT
// Parsing of --listen values: "127.0.0.1:9477", "[::1]:9477", ":9477", "localhost:9477".
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <string>

namespace gpumon {

struct ListenAddress {
  sockaddr_storage address{};  // sockaddr_in or sockaddr_in6, port set
  bool ipv6 = false;
  bool any = false;       // an empty host: every interface (IPv4 and IPv6)
  bool loopback = false;  // 127.0.0.0/8 or ::1
};

/// Fills `out`; returns "" or what is wrong with `text` (names the value). Hosts are numeric,
/// except "localhost" (127.0.0.1). Port 0 asks the kernel for a free port.
std::string parse_listen_address(const std::string& text, ListenAddress& out);

}  // namespace gpumon
