// SPDX-License-Identifier: MIT
// ProcFiles: the seam between gpumon and /proc. Everything that reads process details goes
// through it, so tests point it at a fake tree (testdata/proc/) or wrap it to inject errors
// (EACCES from hidepid mounts cannot be produced for real when tests run as root).
//
// Thread-safety: DiskProcFiles holds only its root path; calls may run on any thread.
#pragma once

#include <cerrno>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace gpumon::host {

/// Result of one read. `error` is an errno value (ENOENT, EACCES, ...), 0 on success.
struct FileText {
  std::string text;
  int error = 0;
  bool ok() const { return error == 0; }
};

/// Targets of the symbolic links in one directory (for /proc/PID/fd).
struct LinkTargets {
  std::vector<std::string> targets;
  bool truncated = false;  ///< the directory had more entries than were asked for
  int error = 0;
  bool ok() const { return error == 0; }
};

/// Names of the entries of one directory (for /proc/PID/task), without "." and "..".
struct DirNames {
  std::vector<std::string> names;
  int error = 0;
  bool ok() const { return error == 0; }
};

class ProcFiles {
 public:
  virtual ~ProcFiles() = default;

  /// Reads at most `max_bytes` of `relative` ("1234/stat", "uptime") under the proc root.
  /// /proc files report size 0, so this reads until end of file or the bound.
  virtual FileText read(std::string_view relative, std::size_t max_bytes) const = 0;

  /// Reads the link targets of up to `max_entries` entries of directory `relative` ("1234/fd").
  virtual LinkTargets read_links(std::string_view relative, std::size_t max_entries) const = 0;

  /// 0 when directory `relative` exists, else an errno value.
  virtual int probe(std::string_view relative) const = 0;

  /// Lists up to `max_entries` entries of directory `relative` ("1234/task"). ENOSYS where a
  /// fake does not list.
  virtual DirNames list(std::string_view relative, std::size_t max_entries) const {
    (void)relative, (void)max_entries;
    return DirNames{{}, ENOSYS};
  }
};

/// ProcFiles over a real directory: "/proc" by default, a fake tree in tests.
class DiskProcFiles final : public ProcFiles {
 public:
  explicit DiskProcFiles(std::string root = "/proc");

  FileText read(std::string_view relative, std::size_t max_bytes) const override;
  LinkTargets read_links(std::string_view relative, std::size_t max_entries) const override;
  int probe(std::string_view relative) const override;
  DirNames list(std::string_view relative, std::size_t max_entries) const override;

  const std::string& root() const { return root_; }

 private:
  std::string path_of(std::string_view relative) const;
  std::string root_;
};

}  // namespace gpumon::host
