// SPDX-License-Identifier: MIT
#include "http/http_counters.h"

namespace gpumon {

const char* reject_reason_name(RejectReason reason) {
  switch (reason) {
    case RejectReason::kMalformed: return "malformed";
    case RejectReason::kMethod: return "method";
    case RejectReason::kBody: return "body";
    case RejectReason::kRange: return "range";
    case RejectReason::kNotFound: return "not_found";
    case RejectReason::kUriTooLong: return "uri_too_long";
    case RejectReason::kBusy: return "busy";
    case RejectReason::kUnauthorized: return "unauthorized";
    case RejectReason::kClientCert: return "client_cert";
    case RejectReason::kPerAddress: return "per_address";
  }
  return "unknown";
}

void HttpCounters::count_response(int status) {
  std::lock_guard lock(mutex_);
  ++responses_[status];
}

void HttpCounters::count_rejection(RejectReason reason) {
  std::lock_guard lock(mutex_);
  ++rejections_[reject_reason_name(reason)];
}

std::map<int, std::uint64_t> HttpCounters::responses() const {
  std::lock_guard lock(mutex_);
  return responses_;
}

std::map<std::string, std::uint64_t> HttpCounters::rejections() const {
  std::lock_guard lock(mutex_);
  return rejections_;
}

}  // namespace gpumon
