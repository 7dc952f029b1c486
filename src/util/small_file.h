// SPDX-License-Identifier: MIT
// Reading a small file that someone else may have put in place: never blocks (a FIFO or a
// device there is refused, not opened for a read that would wait) and never reads past a bound.
// Header-only: the C++ client and the Python module (standard library only) use it too.
//
// Thread-safety: a pure function of the file system.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>

namespace gpumon::util {

struct SmallFileRules {
  bool follow_links = true;  ///< false: a symbolic link in the last component is refused
  bool owner_only = false;   ///< true: a file of another user is refused
};

struct SmallFile {
  std::string text;   ///< at most the bound's bytes
  bool more = false;  ///< the file went on past the bound
};

/// The first `max_bytes` of `path` when it is a regular file the rules allow; nullopt when it
/// cannot be opened or is refused.
inline std::optional<SmallFile> read_small_file(const std::string& path, std::size_t max_bytes,
                                                SmallFileRules rules = {}) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK |
                                          (rules.follow_links ? 0 : O_NOFOLLOW));
  if (fd < 0) return std::nullopt;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
      (rules.owner_only && st.st_uid != ::geteuid())) {
    ::close(fd);
    return std::nullopt;
  }
  SmallFile out;
  char buf[16384];
  // Up to one byte past the bound: that byte tells a file that goes on.
  for (ssize_t n; out.text.size() <= max_bytes && (n = ::read(fd, buf, sizeof buf)) > 0;)
    out.text.append(buf, std::min(static_cast<std::size_t>(n), max_bytes + 1 - out.text.size()));
  ::close(fd);
  out.more = out.text.size() > max_bytes;
  if (out.more) out.text.resize(max_bytes);
  return out;
}

}  // namespace gpumon::util
