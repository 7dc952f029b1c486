// SPDX-License-Identifier: MIT
#include "http/basic_auth.h"

#include <gtest/gtest.h>
#include <time.h>

#include <chrono>

#include "http/test_client.h"

namespace gpumon {
namespace {

using testing::basic_authorization;
using testing::bcrypt_hash;

TEST(Base64, StrictDecoding) {
  EXPECT_EQ(detail::base64_decode("YWxpY2U6cHc=").value(), "alice:pw");
  EXPECT_EQ(detail::base64_decode("YQ==").value(), "a");
  EXPECT_EQ(detail::base64_decode("").value(), "");
  EXPECT_FALSE(detail::base64_decode("YQ="));
  EXPECT_FALSE(detail::base64_decode("Y=Q="));
  EXPECT_FALSE(detail::base64_decode("YQ==YQ=="));
  EXPECT_FALSE(detail::base64_decode("YW!j"));
}

TEST(BasicAuth, GoodAndBadPasswords) {
  BasicAuth auth({{"alice", bcrypt_hash("pw")}});
  EXPECT_TRUE(auth.enabled());
  EXPECT_EQ(auth.check(basic_authorization("alice:pw")).value(), "alice");
  EXPECT_EQ(auth.check("basic  " + basic_authorization("alice:pw").substr(6)).value(), "alice");
  EXPECT_FALSE(auth.check(basic_authorization("alice:PW")));
  EXPECT_FALSE(auth.check(basic_authorization("alice:")));
  EXPECT_FALSE(auth.check(basic_authorization("bob:pw")));
  EXPECT_FALSE(auth.check(basic_authorization("alicepw")));
  EXPECT_FALSE(auth.check(basic_authorization(std::string("alice:pw\0x", 10))));
  EXPECT_FALSE(auth.check("Bearer abc"));
  EXPECT_FALSE(auth.check("Basic"));
  EXPECT_FALSE(auth.check("Basic !!!!"));
  EXPECT_FALSE(auth.check(""));
  EXPECT_FALSE(BasicAuth({}).enabled());
}

TEST(BasicAuth, SuccessIsCachedFailureIsNot) {
  BasicAuth auth({{"alice", bcrypt_hash("pw")}});
  ASSERT_TRUE(auth.check(basic_authorization("alice:pw")));
  const auto runs = auth.bcrypt_runs();
  ASSERT_TRUE(auth.check(basic_authorization("alice:pw")));
  EXPECT_EQ(auth.bcrypt_runs(), runs);
  EXPECT_FALSE(auth.check(basic_authorization("alice:wrong")));
  EXPECT_FALSE(auth.check(basic_authorization("alice:wrong")));
  EXPECT_EQ(auth.bcrypt_runs(), runs + 2);
}

// CVE-2022-46146: the cache key was the plain concatenation user + hash + password, so a user
// name made of a real user and its hash matched the cached entry of that real user.
TEST(BasicAuth, CacheKeyCannotBeForged) {
  const auto hash = bcrypt_hash("pw");
  BasicAuth auth({{"alice", hash}});
  ASSERT_TRUE(auth.check(basic_authorization("alice:pw")));
  EXPECT_FALSE(auth.check(basic_authorization("alice" + hash + ":pw")));
  EXPECT_FALSE(auth.check(basic_authorization("alic:e" + hash + "pw")));
  EXPECT_FALSE(auth.check(basic_authorization("alice:" + hash + "pw")));
  EXPECT_FALSE(auth.check(basic_authorization(":alice" + hash + "pw")));
}

// This thread's CPU time: what a check costs, whatever else the machine runs meanwhile.
std::chrono::nanoseconds thread_cpu_time() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);
}

// An unknown user costs a bcrypt run too, so timing does not tell which names exist.
TEST(BasicAuth, UnknownUserTakesAsLongAsAWrongPassword) {
  BasicAuth auth({{"alice", bcrypt_hash("pw", 8)}});
  auto cost = [&](const std::string& credentials) {
    const auto start = thread_cpu_time();
    EXPECT_FALSE(auth.check(basic_authorization(credentials)));
    return thread_cpu_time() - start;
  };
  // CPU time, the cheapest of several interleaved runs: a busy machine delays a check but does
  // not make it cost more. Without the fake hash an unknown user would cost microseconds
  // instead of a bcrypt run (about 15 ms).
  auto wrong = std::chrono::nanoseconds::max();
  auto unknown = wrong;
  for (int i = 0; i < 6; ++i) {
    wrong = std::min(wrong, cost("alice:nope"));
    unknown = std::min(unknown, cost("mallory:nope"));
  }
  EXPECT_GT(unknown * 3, wrong);
  EXPECT_GT(wrong * 3, unknown);
  EXPECT_EQ(auth.bcrypt_runs(), 12u);
}

}  // namespace
}  // namespace gpumon
