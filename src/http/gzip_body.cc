// SPDX-License-Identifier: MIT
#include "http/gzip_body.h"

#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace gpumon {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

// The q of one coding's parameters ("q=0.5"); 1 when absent or unreadable.
double quality(std::string_view params) {
  while (!params.empty()) {
    const std::size_t semi = std::min(params.find(';'), params.size());
    std::string_view p = trim(params.substr(0, semi));
    params.remove_prefix(std::min(semi + 1, params.size()));
    if (p.size() > 2 && (p[0] == 'q' || p[0] == 'Q') && p[1] == '=') {
      const std::string value(p.substr(2));
      char* end = nullptr;
      const double q = std::strtod(value.c_str(), &end);
      if (end != value.c_str()) return q;
    }
  }
  return 1;
}

}  // namespace

bool accepts_gzip(std::string_view accept_encoding) {
  std::optional<double> gzip_q, any_q;
  while (!accept_encoding.empty()) {
    const std::size_t comma = std::min(accept_encoding.find(','), accept_encoding.size());
    std::string_view item = accept_encoding.substr(0, comma);
    accept_encoding.remove_prefix(std::min(comma + 1, accept_encoding.size()));
    const std::size_t semi = std::min(item.find(';'), item.size());
    const std::string_view coding = trim(item.substr(0, semi));
    const double q = quality(item.substr(std::min(semi + 1, item.size())));
    if (iequals(coding, "gzip") || iequals(coding, "x-gzip")) gzip_q = q;
    if (coding == "*") any_q = q;
  }
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
