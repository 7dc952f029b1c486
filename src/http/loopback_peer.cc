// SPDX-License-Identifier: MIT
#include "http/loopback_peer.h"

#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

namespace gpumon::detail {
namespace {

// An address in the form inet_diag wants it: the family, the address words, the port (network
// order), with ::ffff:a.b.c.d taken as the IPv4 address it is (a dual-stack server sees IPv4
// clients so; their sockets are IPv4 sockets).
struct Endpoint {
  int family = 0;
  std::uint32_t words[4] = {};
  std::uint16_t port = 0;
};

std::optional<Endpoint> endpoint_of(const sockaddr* address) {
  if (address == nullptr) return std::nullopt;
  Endpoint e;
  if (address->sa_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(address);
    e.family = AF_INET;
    std::memcpy(e.words, &in->sin_addr, sizeof in->sin_addr);
    e.port = in->sin_port;
    return e;
  }
  if (address->sa_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(address);
    e.port = in6->sin6_port;
    if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
      e.family = AF_INET;
      std::memcpy(e.words, in6->sin6_addr.s6_addr + 12, 4);
    } else {
      e.family = AF_INET6;
      std::memcpy(e.words, &in6->sin6_addr, sizeof in6->sin6_addr);
    }
    return e;
  }
  return std::nullopt;
}

bool loopback(const Endpoint& e) {
  if (e.family == AF_INET) {
    unsigned char first = 0;
    std::memcpy(&first, e.words, 1);
    return first == 127;
  }
  static const in6_addr kLoopback = IN6ADDR_LOOPBACK_INIT;
  return std::memcmp(e.words, &kLoopback, sizeof kLoopback) == 0;
}

}  // namespace

bool is_loopback(const sockaddr* address) {
  const auto e = endpoint_of(address);
  return e && loopback(*e);
}

std::optional<uid_t> loopback_peer_uid(const sockaddr* client, const sockaddr* server) {
  const auto from = endpoint_of(client);
  const auto to = endpoint_of(server);
  if (!from || !to || from->family != to->family || !loopback(*from) || !loopback(*to))
    return std::nullopt;

  struct {
    nlmsghdr header;
    inet_diag_req_v2 request;
  } ask{};
  ask.header.nlmsg_len = sizeof ask;
  ask.header.nlmsg_type = SOCK_DIAG_BY_FAMILY;
  ask.header.nlmsg_flags = NLM_F_REQUEST;  // one socket by its addresses, not a dump
  ask.request.sdiag_family = static_cast<std::uint8_t>(from->family);
  ask.request.sdiag_protocol = IPPROTO_TCP;
  ask.request.idiag_states = ~0U;
  ask.request.id.idiag_sport = from->port;
  ask.request.id.idiag_dport = to->port;
  std::memcpy(ask.request.id.idiag_src, from->words, sizeof from->words);
  std::memcpy(ask.request.id.idiag_dst, to->words, sizeof to->words);
  ask.request.id.idiag_cookie[0] = INET_DIAG_NOCOOKIE;
  ask.request.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;

  const int fd = ::socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
  if (fd < 0) return std::nullopt;
  // The kernel answers at once; the timeout only guards against a kernel that does not.
  const timeval timeout{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  std::optional<uid_t> uid;
  alignas(nlmsghdr) char reply[1024];
  if (::sendto(fd, &ask, sizeof ask, 0, reinterpret_cast<sockaddr*>(&kernel), sizeof kernel) ==
      static_cast<ssize_t>(sizeof ask)) {
    const ssize_t n = ::recv(fd, reply, sizeof reply, 0);
    const auto* h = reinterpret_cast<const nlmsghdr*>(reply);
    if (n >= static_cast<ssize_t>(sizeof(nlmsghdr)) && NLMSG_OK(h, static_cast<unsigned>(n)) &&
        h->nlmsg_type == SOCK_DIAG_BY_FAMILY &&
        h->nlmsg_len >= NLMSG_LENGTH(sizeof(inet_diag_msg))) {
      const auto* found = reinterpret_cast<const inet_diag_msg*>(reply + NLMSG_HDRLEN);
      uid = found->idiag_uid;
    }
  }
  ::close(fd);
  return uid;
}

}  // namespace gpumon::detail
