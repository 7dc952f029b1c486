// SPDX-License-Identifier: MIT
// The checks every request passes before authentication and the handler: plain data in,
// a refusal (or none) out, so it is tested and fuzzed without sockets.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "http/http_counters.h"

namespace gpumon {

struct GuardInput {
  std::string_view method;
  std::string_view path;
  std::size_t uri_bytes = 0;  // path plus query string
  bool has_body = false;      // Content-Length other than 0, or Transfer-Encoding
  bool has_range = false;     // a Range header
  bool has_nul = false;       // a NUL byte in a header
};

struct Refusal {
  int status = 0;
  RejectReason reason{};
  std::string body;
};

/// Order: 400 (NUL in a header), 414 (URI too long), 405 (method), 400 (body), 416 (Range). The
/// path allow-list (404) is checked apart, after authentication, by path_allowed().
std::optional<Refusal> guard_request(const GuardInput& in, std::size_t max_uri_bytes);

/// True when `path` is one of `paths` (exact match).
bool path_allowed(std::string_view path, const std::vector<std::string>& paths);

}  // namespace gpumon
