// SPDX-License-Identifier: MIT
#include "http/request_guard.h"

#include <gtest/gtest.h>

namespace gpumon {
namespace {

GuardInput get(std::string_view path) {
  GuardInput in;
  in.method = "GET";
  in.path = path;
  in.uri_bytes = path.size();
  return in;
}

TEST(RequestGuard, GetAndHeadPass) {
  EXPECT_FALSE(guard_request(get("/metrics"), 2048));
  auto head = get("/metrics");
  head.method = "HEAD";
  EXPECT_FALSE(guard_request(head, 2048));
}

TEST(RequestGuard, OtherMethodsAre405) {
  for (const char* method : {"POST", "PUT", "DELETE", "OPTIONS", "TRACE", "get", "CONNECT"}) {
    auto in = get("/metrics");
    in.method = method;
    auto refusal = guard_request(in, 2048);
    ASSERT_TRUE(refusal) << method;
    EXPECT_EQ(refusal->status, 405);
    EXPECT_EQ(refusal->reason, RejectReason::kMethod);
  }
}

TEST(RequestGuard, BodyRangeAndLongUriAreRefused) {
  auto in = get("/metrics");
  in.has_body = true;
  EXPECT_EQ(guard_request(in, 2048)->status, 400);
  in = get("/metrics");
  in.has_range = true;
  EXPECT_EQ(guard_request(in, 2048)->status, 416);
  in = get("/metrics");
  in.has_nul = true;
  EXPECT_EQ(guard_request(in, 2048)->reason, RejectReason::kMalformed);
  in = get("/metrics");
  in.uri_bytes = 2049;
  EXPECT_EQ(guard_request(in, 2048)->reason, RejectReason::kUriTooLong);
  in.method = "POST";  // the length is checked first
  EXPECT_EQ(guard_request(in, 2048)->status, 414);
}

TEST(RequestGuard, PathsMatchExactly) {
  const std::vector<std::string> paths = {"/", "/metrics"};
  EXPECT_TRUE(path_allowed("/metrics", paths));
  EXPECT_TRUE(path_allowed("/", paths));
  EXPECT_FALSE(path_allowed("/metrics/", paths));
  EXPECT_FALSE(path_allowed("/Metrics", paths));
  EXPECT_FALSE(path_allowed("", paths));
}

TEST(HttpCounters, CountsByCodeAndReason) {
  HttpCounters counters;
  counters.count_response(200);
  counters.count_response(200);
  counters.count_response(404);
  counters.count_rejection(RejectReason::kNotFound);
  EXPECT_EQ(counters.responses().at(200), 2u);
  EXPECT_EQ(counters.responses().at(404), 1u);
  EXPECT_EQ(counters.rejections().at("not_found"), 1u);
  EXPECT_STREQ(reject_reason_name(RejectReason::kBusy), "busy");
}

}  // namespace
}  // namespace gpumon
