// SPDX-License-Identifier: MIT
#include "record/chunk_codec.h"

#include <zstd.h>

#include <memory>

#include "record/byte_io.h"

namespace gpumon::record {
namespace {

using detail::ByteReader;
using detail::put_varint;
using detail::unzigzag;
using detail::zigzag;

constexpr std::uint8_t kAllPresent = 0;
constexpr std::uint8_t kBitmap = 1;
constexpr std::uint8_t kDelta = 0;
constexpr std::uint8_t kDeltaOfDelta = 1;

// Deltas use wrapping unsigned arithmetic, so any int64 series round-trips exactly.
std::int64_t sub(std::int64_t a, std::int64_t b) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) - static_cast<std::uint64_t>(b));
}
std::int64_t add(std::int64_t a, std::int64_t b) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
}

void put_series(std::vector<std::uint8_t>& out, const std::vector<std::int64_t>& v, bool dod) {
  std::int64_t prev = 0;
  std::int64_t prev_delta = 0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::int64_t delta = sub(v[i], prev);
    put_varint(out, zigzag(dod && i >= 2 ? sub(delta, prev_delta) : delta));
    prev = v[i];
    prev_delta = delta;
  }
}

bool get_series(ByteReader& in, std::size_t n, bool dod, std::vector<std::int64_t>& v) {
  v.resize(n);
  std::int64_t prev = 0;
  std::int64_t prev_delta = 0;
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t u = 0;
    if (!in.get_varint(u)) return false;
    const std::int64_t delta = dod && i >= 2 ? add(prev_delta, unzigzag(u)) : unzigzag(u);
    v[i] = add(prev, delta);
    prev = v[i];
    prev_delta = delta;
  }
  return true;
}

void put_column(std::vector<std::uint8_t>& out, const ChunkColumn& c) {
  put_varint(out, c.metric);
  std::vector<std::int64_t> present_values;
  for (std::size_t i = 0; i < c.values.size(); ++i)
    if (c.present[i]) present_values.push_back(c.values[i]);
  if (present_values.size() == c.values.size()) {
    out.push_back(kAllPresent);
  } else {
    out.push_back(kBitmap);
    std::vector<std::uint8_t> bits((c.values.size() + 7) / 8);
    for (std::size_t i = 0; i < c.values.size(); ++i)
      if (c.present[i]) bits[i / 8] = static_cast<std::uint8_t>(bits[i / 8] | (1U << (i % 8)));
    out.insert(out.end(), bits.begin(), bits.end());
  }
  // Gauges compress best as deltas, counters (energy) as deltas of deltas: keep the smaller.
  std::vector<std::uint8_t> delta;
  std::vector<std::uint8_t> dod;
  put_series(delta, present_values, false);
  put_series(dod, present_values, true);
  const bool use_dod = dod.size() < delta.size();
  out.push_back(use_dod ? kDeltaOfDelta : kDelta);
  const auto& chosen = use_dod ? dod : delta;
  out.insert(out.end(), chosen.begin(), chosen.end());
}

std::string get_column(ByteReader& in, std::size_t n, int prev_metric, ChunkColumn& c) {
  std::uint64_t metric = 0;
  std::uint8_t presence = 0;
  if (!in.get_varint(metric) || metric > 0xFFFF || !in.get_byte(presence))
    return "truncated column header";
  if (static_cast<int>(metric) <= prev_metric) return "columns out of order";
  c.metric = static_cast<std::uint16_t>(metric);
  c.present.assign(n, 1);
  std::size_t count = n;
  if (presence == kBitmap) {
    std::span<const std::uint8_t> bits;
    if (!in.get_bytes((n + 7) / 8, bits)) return "truncated presence bitmap";
    count = 0;
    for (std::size_t i = 0; i < n; ++i) {
      c.present[i] = (bits[i / 8] >> (i % 8)) & 1U;
      count += c.present[i];
    }
  } else if (presence != kAllPresent) {
    return "unknown presence encoding";
  }
  std::uint8_t mode = 0;
  if (!in.get_byte(mode) || mode > kDeltaOfDelta) return "bad value encoding";
  if (count > in.remaining()) return "truncated values";
  std::vector<std::int64_t> packed;
  if (!get_series(in, count, mode == kDeltaOfDelta, packed)) return "truncated values";
  c.values.assign(n, 0);
  for (std::size_t i = 0, k = 0; i < n; ++i)
    if (c.present[i]) c.values[i] = packed[k++];
  return {};
}

std::vector<std::uint8_t> encode_raw(const ChunkData& chunk) {
  std::vector<std::uint8_t> out;
  put_varint(out, chunk.time_ms.size());
  put_series(out, chunk.time_ms, true);
  std::size_t used = 0;
  for (const auto& c : chunk.columns)
    for (auto p : c.present)
      if (p) {
        ++used;
        break;
      }
  put_varint(out, used);
  for (const auto& c : chunk.columns) {
    bool any = false;
    for (auto p : c.present) any = any || p != 0;
    if (any) put_column(out, c);
  }
  return out;
}

ChunkDecodeResult decode_raw(std::span<const std::uint8_t> raw) {
  ByteReader in(raw);
  std::uint64_t n = 0;
  if (!in.get_varint(n)) return std::string("truncated tick count");
  if (n > kMaxChunkTicks || n > in.remaining()) return std::string("bad tick count");
  ChunkData chunk;
  if (!get_series(in, n, true, chunk.time_ms)) return std::string("truncated timestamps");
  std::uint64_t ncols = 0;
  if (!in.get_varint(ncols) || ncols > in.remaining()) return std::string("bad column count");
  int prev_metric = -1;
  for (std::uint64_t i = 0; i < ncols; ++i) {
    ChunkColumn c;
    if (auto err = get_column(in, n, prev_metric, c); !err.empty()) return err;
    prev_metric = c.metric;
    chunk.columns.push_back(std::move(c));
  }
  if (!in.at_end()) return std::string("trailing bytes");
  return chunk;
}

}  // namespace

std::vector<std::uint8_t> encode_chunk(const ChunkData& chunk, ChunkCompression compression,
                                       int zstd_level) {
  const std::vector<std::uint8_t> raw = encode_raw(chunk);
  std::vector<std::uint8_t> out{kChunkFormat, static_cast<std::uint8_t>(compression)};
  put_varint(out, raw.size());
  if (compression == ChunkCompression::kNone) {
    out.insert(out.end(), raw.begin(), raw.end());
    return out;
  }
  const std::size_t header = out.size();
  out.resize(header + ZSTD_compressBound(raw.size()));
  // The frame carries a checksum of the raw bytes: a damaged chunk fails rather than decoding
  // to wrong numbers (4 bytes a chunk).
  // One context per thread, reused: creating one costs more than compressing a chunk.
  thread_local const std::unique_ptr<ZSTD_CCtx, std::size_t (*)(ZSTD_CCtx*)> ctx(ZSTD_createCCtx(),
                                                                                 ZSTD_freeCCtx);
  std::size_t n = ctx ? ZSTD_CCtx_setParameter(ctx.get(), ZSTD_c_compressionLevel, zstd_level) : 1;
  if (ctx && !ZSTD_isError(n)) n = ZSTD_CCtx_setParameter(ctx.get(), ZSTD_c_checksumFlag, 1);
  if (ctx && !ZSTD_isError(n))
    n = ZSTD_compress2(ctx.get(), out.data() + header, out.size() - header, raw.data(), raw.size());
  if (!ctx || ZSTD_isError(n)) return encode_chunk(chunk, ChunkCompression::kNone, 0);
  out.resize(header + n);
  return out;
}

ChunkDecodeResult decode_chunk(std::span<const std::uint8_t> blob) {
  ByteReader in(blob);
  std::uint8_t format = 0;
  std::uint8_t compression = 0;
  std::uint64_t raw_size = 0;
  if (!in.get_byte(format) || !in.get_byte(compression) || !in.get_varint(raw_size))
    return std::string("chunk header truncated");
  if (format != kChunkFormat) return "unknown chunk format " + std::to_string(format);
  if (raw_size > kMaxChunkRawBytes) return std::string("chunk too large");
  std::span<const std::uint8_t> payload;
  in.get_bytes(in.remaining(), payload);
  if (compression == static_cast<std::uint8_t>(ChunkCompression::kNone)) {
    if (payload.size() != raw_size) return std::string("chunk size mismatch");
    return decode_raw(payload);
  }
  if (compression != static_cast<std::uint8_t>(ChunkCompression::kZstd))
    return "unknown chunk compression " + std::to_string(compression);
  std::vector<std::uint8_t> raw(raw_size);
  const std::size_t n = ZSTD_decompress(raw.data(), raw.size(), payload.data(), payload.size());
  if (ZSTD_isError(n) || n != raw_size) return std::string("chunk does not decompress");
  return decode_raw(raw);
}

}  // namespace gpumon::record
