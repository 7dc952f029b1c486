// SPDX-License-Identifier: MIT
#include "http/gzip_body.h"

#include <zlib.h>

#include <algorithm>
#include <cctype>

#include "util/quality_list.h"

namespace gpumon {
namespace {

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

}  // namespace

bool accepts_gzip(std::string_view accept_encoding) {
  std::optional<double> gzip_q, any_q;
  util::for_each_quality_item(accept_encoding, [&](std::string_view coding, double q) {
    if (iequals(coding, "gzip") || iequals(coding, "x-gzip")) gzip_q = q;
    if (coding == "*") any_q = q;
  });
  if (gzip_q) return *gzip_q > 0;
  return any_q && *any_q > 0;
}

std::optional<std::string> gzip(std::string_view body) {
  z_stream z{};
  // windowBits 15 + 16: the gzip wrapper rather than zlib's.
  if (deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return std::nullopt;
  std::string out(deflateBound(&z, static_cast<uLong>(body.size())), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(body.data()));
  z.avail_in = static_cast<uInt>(body.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&z, Z_FINISH);
  const std::size_t written = out.size() - z.avail_out;
  deflateEnd(&z);
  if (rc != Z_STREAM_END) return std::nullopt;
  out.resize(written);
  return out;
}

}  // namespace gpumon
