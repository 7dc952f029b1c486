// SPDX-License-Identifier: MIT
// Where the agent listens, and the checks that keep its socket private: the default folder is
// created 0700 and must belong to us and be writable by us alone (another user who can write
// there could plant a symbolic link for the start lock or a fake agent), the socket is made 0600,
// and a socket (or folder) that belongs to another user is refused rather than used or replaced.
// Thread-safety: plain functions; they touch the file system only.
#pragma once

#include <string>

namespace gpumon::agent {

/// $XDG_RUNTIME_DIR/gpumon/agent.sock, or /tmp/gpumon-<uid>/agent.sock without XDG_RUNTIME_DIR.
std::string default_socket_path();

/// Empty when the folder holding `socket_path` may hold the agent's socket and start lock: a
/// folder (not a symbolic link) of this user that nobody else can write to; one of ours that
/// others can only read is made 0700. Else one sentence naming the folder, its owner and mode,
/// the risk and what to do. With `create`, a missing folder is created 0700; without, a missing
/// folder is fine (nothing can be planted in it).
std::string check_socket_folder(const std::string& socket_path, bool create);

/// Makes `path` ready to bind: creates its folder (0700) when missing; gpumon's own folders
/// (the default one, or any ending in gpumon or gpumon-<uid>) must pass check_socket_folder();
/// removes a stale socket of ours (nobody listening); refuses a socket of another user, a live
/// agent's socket, or a path that exists and is no socket. Empty, or why not.
std::string prepare_listen_path(const std::string& path);

/// Empty when `path` is a socket owned by this user; else why the client must not use it.
std::string check_owned_socket(const std::string& path);

/// `<socket>.ranks.json`: where the node serving the agent at `socket_path` publishes its ranks'
/// allocator memory and its GPUs' readings (node/rank_memory_file.h) for the snapshot, `watch`
/// and the training processes' own table.
std::string rank_memory_path(const std::string& socket_path);

/// Unix socket paths are limited to sizeof(sockaddr_un::sun_path) - 1 bytes (107 on Linux).
bool fits_sun_path(const std::string& path);

}  // namespace gpumon::agent
