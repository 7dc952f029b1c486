// SPDX-License-Identifier: MIT
#include "http/request_guard.h"

#include <algorithm>

namespace gpumon {

std::optional<Refusal> guard_request(const GuardInput& in, std::size_t max_uri_bytes) {
  if (in.has_nul) return Refusal{400, RejectReason::kMalformed, "malformed request\n"};
  if (in.uri_bytes > max_uri_bytes) {
    return Refusal{414, RejectReason::kUriTooLong, "URI too long\n"};
  }
  if (in.method != "GET" && in.method != "HEAD") {
    return Refusal{405, RejectReason::kMethod, "only GET and HEAD are served\n"};
  }
  if (in.has_body) return Refusal{400, RejectReason::kBody, "a request body is not accepted\n"};
  // A Range header is refused outright: ranges over a generated body are never needed, and
  // many ranges are an amplification attack (see docs/exporter.md).
  if (in.has_range) return Refusal{416, RejectReason::kRange, "Range is not supported\n"};
  return std::nullopt;
}

bool path_allowed(std::string_view path, const std::vector<std::string>& paths) {
  return std::find(paths.begin(), paths.end(), path) != paths.end();
}

}  // namespace gpumon
