// SPDX-License-Identifier: MIT
// MapFiles: a ProcFiles over maps the test fills ("4242/stat" -> text, "4242/task" -> names),
// for tests of what reads /proc. A path not in a map answers ENOENT.
#pragma once

#include <cerrno>
#include <map>
#include <string>
#include <vector>

#include "host/proc_files.h"

namespace gpumon::host::testing {

class MapFiles : public ProcFiles {
 public:
  std::map<std::string, std::string> files;
  std::map<std::string, std::vector<std::string>> dirs;

  FileText read(std::string_view relative, std::size_t) const override {
    const auto it = files.find(std::string(relative));
    return it == files.end() ? FileText{"", ENOENT} : FileText{it->second, 0};
  }
  LinkTargets read_links(std::string_view, std::size_t) const override {
    return {{}, false, ENOENT};
  }
  int probe(std::string_view) const override { return ENOENT; }
  DirNames list(std::string_view relative, std::size_t) const override {
    const auto it = dirs.find(std::string(relative));
    return it == dirs.end() ? DirNames{{}, ENOENT} : DirNames{it->second, 0};
  }
};

}  // namespace gpumon::host::testing
