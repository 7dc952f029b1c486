// SPDX-License-Identifier: MIT
// Who is on the other end of a loopback TCP connection. Every local client of a server bound to
// 127.0.0.1 has the same address, so a limit per address is a limit shared by every local user:
// one user's 64 idle connections would lock out the others' scrapes. The user that owns the
// client's socket tells them apart. It is asked of the kernel (NETLINK_SOCK_DIAG, as `ss -e`
// does) for the one connection by its four addresses: tens of microseconds, no privilege.
//
// Thread-safety: free functions; each call opens and closes its own netlink socket.
#pragma once

#include <sys/socket.h>
#include <sys/types.h>

#include <optional>

namespace gpumon::detail {

/// Whether `address` is a loopback address (127.0.0.0/8, ::1, ::ffff:127.x.y.z).
bool is_loopback(const sockaddr* address);

/// The uid owning the TCP socket at `client` (address and port) that is connected to `server`;
/// nullopt when either is not a loopback address, or the kernel has no such socket (it closed,
/// or `server` is not the address the client connected to).
std::optional<uid_t> loopback_peer_uid(const sockaddr* client, const sockaddr* server);

}  // namespace gpumon::detail
