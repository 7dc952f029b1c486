// SPDX-License-Identifier: MIT
// gzip for bodies: the Accept-Encoding rules, a round trip through zlib's own inflate, and the
// server answering a scraper that asks for gzip (and one that does not) over loopback.
#include "http/gzip_body.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include "http/test_client.h"
#include "http/test_server.h"

namespace gpumon {
namespace {

// `packed` read back through zlib, expecting the gzip wrapper.
std::string gunzip(const std::string& packed) {
  z_stream z{};
  EXPECT_EQ(inflateInit2(&z, 15 + 16), Z_OK);
  std::string out;
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(packed.data()));
  z.avail_in = static_cast<uInt>(packed.size());
  char buf[65536];
  int rc = Z_OK;
  while (rc == Z_OK) {
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof buf;
    rc = inflate(&z, Z_NO_FLUSH);
    out.append(buf, sizeof buf - z.avail_out);
  }
  EXPECT_EQ(rc, Z_STREAM_END);
  inflateEnd(&z);
  return out;
}

TEST(Gzip, AcceptEncodingAsRfc9110ReadsIt) {
  EXPECT_TRUE(accepts_gzip("gzip"));
  EXPECT_TRUE(accepts_gzip("GZip"));
  EXPECT_TRUE(accepts_gzip("deflate, gzip;q=0.5"));
  EXPECT_TRUE(accepts_gzip("identity, x-gzip"));
  EXPECT_TRUE(accepts_gzip("*"));
  EXPECT_TRUE(accepts_gzip(" br ;q=1, gzip ; q=0.001 "));
  EXPECT_FALSE(accepts_gzip(""));
  EXPECT_FALSE(accepts_gzip("identity"));
  EXPECT_FALSE(accepts_gzip("gzip;q=0"));
  EXPECT_FALSE(accepts_gzip("gzip;q=0.0, *"));  // an explicit refusal wins over the wildcard
  EXPECT_FALSE(accepts_gzip("*;q=0"));
  EXPECT_FALSE(accepts_gzip("gzipped"));
}

TEST(Gzip, RoundTripsThroughZlib) {
  std::string body;
  for (int i = 0; i < 2000; ++i)
    body += "gpumon_gpu_power_watts{gpu=\"" + std::to_string(i) + "\"} 1\n";
  const auto packed = gzip(body);
  ASSERT_TRUE(packed);
  EXPECT_LT(packed->size(), body.size() / 5);
  EXPECT_EQ(gunzip(*packed), body);
  EXPECT_EQ(gunzip(*gzip("")), "");
}

TEST(Gzip, TheServerCompressesWhenAskedAndOnlyThen) {
  testing::TestServer t;
  ASSERT_EQ(t.start(), "");
  auto plain = testing::request(t.port(), "/big");
  EXPECT_EQ(plain.status, 200);
  EXPECT_EQ(plain.headers.count("content-encoding"), 0U);
  EXPECT_EQ(plain.headers["vary"], "Accept-Encoding");
  EXPECT_EQ(plain.body.size(), std::size_t{8} << 20);

  auto packed = testing::request(t.port(), "/big", "Accept-Encoding: gzip\r\n");
  EXPECT_EQ(packed.status, 200);
  EXPECT_EQ(packed.headers["content-encoding"], "gzip");
  EXPECT_EQ(packed.headers["vary"], "Accept-Encoding");
  EXPECT_LT(packed.body.size(), plain.body.size() / 100);
  EXPECT_EQ(gunzip(packed.body), plain.body);

  // A body under kGzipMinBytes goes as it is.
  auto small = testing::request(t.port(), "/metrics", "Accept-Encoding: gzip\r\n");
  EXPECT_EQ(small.headers.count("content-encoding"), 0U);
  EXPECT_EQ(small.body, testing::kExposition);
}

}  // namespace
}  // namespace gpumon
