// SPDX-License-Identifier: MIT
#include "host/proc_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <utility>

namespace gpumon::host {
namespace {

// Closes a file descriptor or directory stream on every path out of a function.
class FdCloser {
 public:
  explicit FdCloser(int fd) : fd_(fd) {}
  ~FdCloser() {
    if (fd_ >= 0) ::close(fd_);
  }
  FdCloser(const FdCloser&) = delete;
  FdCloser& operator=(const FdCloser&) = delete;

 private:
  int fd_;
};

class DirCloser {
 public:
  explicit DirCloser(DIR* dir) : dir_(dir) {}
  ~DirCloser() {
    if (dir_ != nullptr) ::closedir(dir_);
  }
  DirCloser(const DirCloser&) = delete;
  DirCloser& operator=(const DirCloser&) = delete;

 private:
  DIR* dir_;
};

}  // namespace

DiskProcFiles::DiskProcFiles(std::string root) : root_(std::move(root)) {
  while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
}

std::string DiskProcFiles::path_of(std::string_view relative) const {
  std::string path = root_;
  path += '/';
  path += relative;
  return path;
}

FileText DiskProcFiles::read(std::string_view relative, std::size_t max_bytes) const {
  FileText out;
  const int fd = ::open(path_of(relative).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    out.error = errno;
    return out;
  }
  FdCloser closer(fd);
  std::array<char, 4096> buf{};
  while (out.text.size() < max_bytes) {
    const std::size_t want = std::min(buf.size(), max_bytes - out.text.size());
    const ssize_t n = ::read(fd, buf.data(), want);
    if (n < 0) {
      if (errno == EINTR) continue;
      out.error = errno;  // e.g. ESRCH when the process exits while we read
      out.text.clear();
      return out;
    }
    if (n == 0) break;
    out.text.append(buf.data(), static_cast<std::size_t>(n));
  }
  return out;
}

LinkTargets DiskProcFiles::read_links(std::string_view relative, std::size_t max_entries) const {
  LinkTargets out;
  const std::string dir_path = path_of(relative);
  DIR* dir = ::opendir(dir_path.c_str());
  if (dir == nullptr) {
    out.error = errno;
    return out;
  }
  DirCloser closer(dir);
  std::array<char, 4096> target{};
  std::size_t seen = 0;
  while (true) {
    errno = 0;
    const dirent* entry = ::readdir(dir);
    if (entry == nullptr) {
      if (errno != 0) out.error = errno;
      break;
    }
    if (entry->d_name[0] == '.') continue;
    if (seen == max_entries) {
      out.truncated = true;
      break;
    }
    ++seen;
    const std::string link = dir_path + '/' + entry->d_name;
    const ssize_t n = ::readlink(link.c_str(), target.data(), target.size());
    if (n > 0) out.targets.emplace_back(target.data(), static_cast<std::size_t>(n));
  }
  return out;
}

DirNames DiskProcFiles::list(std::string_view relative, std::size_t max_entries) const {
  DirNames out;
  DIR* dir = ::opendir(path_of(relative).c_str());
  if (dir == nullptr) {
    out.error = errno;
    return out;
  }
  DirCloser closer(dir);
  while (out.names.size() < max_entries) {
    errno = 0;
    const dirent* entry = ::readdir(dir);
    if (entry == nullptr) {
      if (errno != 0) out.error = errno;
      break;
    }
    if (entry->d_name[0] == '.') continue;
    out.names.emplace_back(entry->d_name);
  }
  return out;
}

int DiskProcFiles::probe(std::string_view relative) const {
  struct stat st {};
  if (::stat(path_of(relative).c_str(), &st) != 0) return errno;
  return S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
}

}  // namespace gpumon::host
