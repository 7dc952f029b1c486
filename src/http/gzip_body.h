// SPDX-License-Identifier: MIT
// gzip for response bodies, when the client asks for it (Prometheus sends `Accept-Encoding:
// gzip` with every scrape; a 64-GPU /metrics body shrinks about tenfold). zlib at level 1: the
// body is rendered anew for most scrapes, so fast beats small.
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace gpumon {

/// Bodies smaller than this are sent as they are: the gzip header and the CPU are not worth it.
inline constexpr std::size_t kGzipMinBytes = 1024;

/// Whether an Accept-Encoding value takes gzip: a `gzip`, `x-gzip` or `*` coding whose q is not
/// 0 (RFC 9110 12.5.3; names case-insensitive). An explicit `gzip;q=0` wins over `*`.
bool accepts_gzip(std::string_view accept_encoding);

/// `body` in the gzip format, or nullopt if zlib failed (then send it uncompressed).
std::optional<std::string> gzip(std::string_view body);

}  // namespace gpumon
