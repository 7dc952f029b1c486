// SPDX-License-Identifier: MIT
#include "agent/socket_path.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace gpumon::agent {
namespace {

std::string parent_of(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

bool is_gpumon_folder(const std::string& dir) {
  const std::string base = dir.substr(dir.rfind('/') + 1);
  return base == "gpumon" || base == "gpumon-" + std::to_string(::geteuid());
}

// True when something accepts connections at `path`.
bool someone_listens(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return ok;
}

std::string mode_text(mode_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

// lstat()s the agent's folder `dir` into `st`; a missing one is created 0700 when `create`, else
// `missing` is set. Empty, or why not.
std::string stat_folder(const std::string& dir, bool create, struct stat& st, bool& missing) {
  if (::lstat(dir.c_str(), &st) == 0) return {};
  if (errno != ENOENT) return dir + ": " + std::strerror(errno);
  if (!create) {
    missing = true;
    return {};
  }
  if (::mkdir(dir.c_str(), 0700) != 0 || ::lstat(dir.c_str(), &st) != 0)
    return dir + ": cannot create the agent's folder: " + std::strerror(errno);
  return {};
}

}  // namespace

std::string check_socket_folder(const std::string& socket_path, bool create) {
  const std::string dir = parent_of(socket_path);
  struct stat st {};
  bool missing = false;
  if (auto why = stat_folder(dir, create, st, missing); !why.empty()) return why;
  if (missing) return {};
  const std::string redirect =
      "; set XDG_RUNTIME_DIR to a private folder of yours, or GPUMON_AGENT_SOCKET to a socket "
      "in one";
  if (!S_ISDIR(st.st_mode))
    return dir + " is not a folder (a symbolic link or a file, mode " + mode_text(st.st_mode) +
           ", uid " + std::to_string(st.st_uid) + "): refused; remove it" + redirect;
  if (st.st_uid != ::geteuid())
    return dir + " belongs to uid " + std::to_string(st.st_uid) + " (mode " +
           mode_text(st.st_mode) +
           "), not to you: another user could plant files or a fake agent in it, so it is "
           "refused; have it removed" +
           redirect;
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
    return dir + " is yours but writable by other users (mode " + mode_text(st.st_mode) +
           "): they could have planted files or a fake agent in it, so it is refused; check "
           "and remove it (gpumon recreates it 0700)" +
           redirect;
  if ((st.st_mode & 0777) != 0700 && ::chmod(dir.c_str(), 0700) != 0)
    return dir + ": cannot make it private (0700): " + std::strerror(errno);
  return {};
}

std::string default_socket_path() {
  const char* xdg = std::getenv("XDG_RUNTIME_DIR");
  if (xdg && *xdg) return std::string(xdg) + "/gpumon/agent.sock";
  return "/tmp/gpumon-" + std::to_string(::geteuid()) + "/agent.sock";
}

bool fits_sun_path(const std::string& path) {
  return !path.empty() && path.size() < sizeof(sockaddr_un{}.sun_path);
}

std::string prepare_listen_path(const std::string& path) {
  if (!fits_sun_path(path))
    return path + ": too long for a Unix socket (at most " +
           std::to_string(sizeof(sockaddr_un{}.sun_path) - 1) + " bytes)";
  const std::string dir = parent_of(path);
  struct stat st {};
  if (is_gpumon_folder(dir)) {
    if (auto why = check_socket_folder(path, true); !why.empty()) return why;
  } else {
    bool missing = false;
    if (auto why = stat_folder(dir, true, st, missing); !why.empty()) return why;
    if (!S_ISDIR(st.st_mode)) return dir + ": not a folder (a symbolic link is refused)";
  }
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return {};
    return path + ": " + std::strerror(errno);
  }
  if (!S_ISSOCK(st.st_mode)) return path + ": exists and is not a socket: refused";
  if (st.st_uid != ::geteuid())
    return path + ": a socket of uid " + std::to_string(st.st_uid) + ", not ours: refused";
  if (someone_listens(path)) return path + ": an agent already listens there";
  if (::unlink(path.c_str()) != 0 && errno != ENOENT)
    return path + ": cannot remove the stale socket: " + std::strerror(errno);
  return {};
}

std::string check_owned_socket(const std::string& path) {
  if (!fits_sun_path(path)) return path + ": not a usable Unix socket path";
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return path + ": " + std::strerror(errno);
  if (!S_ISSOCK(st.st_mode)) return path + ": not a socket";
  if (st.st_uid != ::geteuid())
    return path + ": a socket of uid " + std::to_string(st.st_uid) + ", not ours: refused";
  return {};
}

std::string rank_memory_path(const std::string& socket_path) {
  return socket_path + ".ranks.json";
}

}  // namespace gpumon::agent
