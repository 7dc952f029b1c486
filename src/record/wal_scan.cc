// SPDX-License-Identifier: MIT
#include "record/wal_scan.h"

#include <array>
#include <cstdio>
#include <memory>
#include <vector>

namespace gpumon::record::detail {
namespace {

constexpr std::size_t kHeaderBytes = 32;
constexpr std::size_t kFrameHeaderBytes = 24;

std::uint32_t big_endian(const unsigned char* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
         std::uint32_t{p[3]};
}

std::uint32_t little_endian(const unsigned char* p) {
  return (std::uint32_t{p[3]} << 24) | (std::uint32_t{p[2]} << 16) | (std::uint32_t{p[1]} << 8) |
         std::uint32_t{p[0]};
}

// SQLite's WAL checksum: over pairs of 32-bit words in the byte order the magic number names,
// carried on from `sum`.
void checksum(const unsigned char* data, std::size_t bytes, bool big, std::uint32_t sum[2]) {
  for (std::size_t i = 0; i + 8 <= bytes; i += 8) {
    const std::uint32_t a = big ? big_endian(data + i) : little_endian(data + i);
    const std::uint32_t b = big ? big_endian(data + i + 4) : little_endian(data + i + 4);
    sum[0] += a + sum[1];
    sum[1] += b + sum[0];
  }
}

}  // namespace

WalScan scan_wal(const std::string& wal_path) {
  WalScan scan;
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(wal_path.c_str(), "rb"), &std::fclose);
  if (!f) return scan;
  std::array<unsigned char, kHeaderBytes> header{};
  if (std::fread(header.data(), 1, header.size(), f.get()) != header.size()) return scan;
  const std::uint32_t magic = big_endian(header.data());
  if ((magic & 0xFFFFFFFEU) != 0x377F0682U) return scan;
  const bool big = (magic & 1U) != 0;
  const std::uint32_t page_size = big_endian(header.data() + 8);
  if (page_size < 512 || page_size > 65536 || (page_size & (page_size - 1)) != 0) return scan;
  std::uint32_t sum[2] = {0, 0};
  checksum(header.data(), 24, big, sum);
  if (sum[0] != big_endian(header.data() + 24) || sum[1] != big_endian(header.data() + 28))
    return scan;
  scan.header_ok = true;

  const std::uint32_t salt1 = big_endian(header.data() + 16);
  const std::uint32_t salt2 = big_endian(header.data() + 20);
  std::vector<unsigned char> frame(kFrameHeaderBytes + page_size);
  bool broken = false;
  while (std::fread(frame.data(), 1, frame.size(), f.get()) == frame.size()) {
    const bool ours =
        big_endian(frame.data() + 8) == salt1 && big_endian(frame.data() + 12) == salt2;
    if (broken) {
      if (scan.damaged && ours) ++scan.lost_frames;
      continue;
    }
    checksum(frame.data(), 8, big, sum);
    checksum(frame.data() + kFrameHeaderBytes, page_size, big, sum);
    if (ours && sum[0] == big_endian(frame.data() + 16) &&
        sum[1] == big_endian(frame.data() + 20)) {
      ++scan.valid;
      continue;
    }
    broken = true;
    scan.damaged = ours;
    if (ours) scan.lost_frames = 1;
  }
  return scan;
}

}  // namespace gpumon::record::detail
