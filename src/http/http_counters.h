// SPDX-License-Identifier: MIT
// Counts of answered requests by status code and of refused requests by reason, for
// gpumon_http_requests_total{code} and gpumon_http_rejected_total{reason}.
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>

namespace gpumon {

/// Why the server refused a request before (or instead of) the handler.
enum class RejectReason {
  kMalformed,     // 400: a NUL byte in a header
  kMethod,        // 405: not GET or HEAD
  kBody,          // 400: the request carries a body
  kRange,         // 416: a Range header
  kNotFound,      // 404: a path the handler does not serve
  kUriTooLong,    // 414
  kBusy,          // 503: max_in_flight handlers already running
  kUnauthorized,  // 401: basic auth missing or wrong
  kClientCert,    // 403: TLS client certificate missing or not verified
  kPerAddress,    // connection closed at once: its address holds max_connections_per_ip
};

/// The label value of a reason, e.g. "method", "not_found".
const char* reject_reason_name(RejectReason reason);

class HttpCounters {
 public:
  void count_response(int status);
  void count_rejection(RejectReason reason);

  /// Snapshots, ordered by key.
  std::map<int, std::uint64_t> responses() const;
  std::map<std::string, std::uint64_t> rejections() const;

 private:
  mutable std::mutex mutex_;
  std::map<int, std::uint64_t> responses_;
  std::map<std::string, std::uint64_t> rejections_;
};

}  // namespace gpumon
