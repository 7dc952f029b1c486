// SPDX-License-Identifier: MIT
// A look at a recording's -wal file as SQLite will read it (https://sqlite.org/fileformat2.html,
// "The WAL File Format"): SQLite replays frames up to the first one whose salts or checksum do
// not match, and drops the rest without a word. A frame with this WAL's salts but a wrong
// checksum is damage (the frames of an older generation that follow the current ones are not):
// what came after it is lost, and the reader says so.
//
// Thread-safety: a free function.
#pragma once

#include <cstdint>
#include <string>

namespace gpumon::record::detail {

struct WalScan {
  bool header_ok = false;         ///< magic, page size and header checksum are right
  std::uint64_t valid = 0;        ///< frames before the first that does not check out
  bool damaged = false;           ///< that first one has this WAL's salts: damage, not leftovers
  std::uint64_t lost_frames = 0;  ///< with `damaged`: frames of this generation from it on
};

/// Reads `wal_path` frame by frame. A file that cannot be read gives header_ok false.
WalScan scan_wal(const std::string& wal_path);

}  // namespace gpumon::record::detail
