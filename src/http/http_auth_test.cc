// SPDX-License-Identifier: MIT
// Basic auth, TLS and client certificates through the running server, modelled on
// exporter-toolkit's handler and TLS tests.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "http/test_client.h"
#include "http/test_server.h"

namespace gpumon {
namespace {

using testing::basic_authorization;
using testing::bcrypt_hash;
using testing::request;
using testing::test_certs;
using testing::TestServer;
using testing::tls_exchange;
using testing::write_file;

const std::string kGet = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";

ServerOptions with_config(const std::string& yaml, std::string* file_out = nullptr) {
  const auto file = testing::temp_dir() + "/web.yml";
  write_file(file, yaml);
  if (file_out) *file_out = file;
  ServerOptions options;
  options.web_config_file = file;
  return options;
}

std::string auth_header(const std::string& credentials) {
  return "Authorization: " + basic_authorization(credentials) + "\r\n";
}

TEST(HttpAuth, BasicAuthGoodBadUnknownMalformed) {
  const auto hash = bcrypt_hash("s3cret");
  TestServer t(with_config("basic_auth_users:\n  alice: " + hash +
                           "\nhttp_server_config:\n  headers:\n    X-Frame-Options: sameorigin\n"));
  ASSERT_EQ(t.start(), "");
  auto none = request(t.port(), "/metrics");
  EXPECT_EQ(none.status, 401);
  EXPECT_EQ(none.headers["www-authenticate"], "Basic realm=\"gpumon\"");
  EXPECT_EQ(none.headers["x-frame-options"], "sameorigin");

  auto good = request(t.port(), "/metrics", auth_header("alice:s3cret"));
  EXPECT_EQ(good.status, 200);
  EXPECT_EQ(t.last_request().user, "alice");
  EXPECT_EQ(t.last_request().header("authorization"), "");  // not passed to the handler

  EXPECT_EQ(request(t.port(), "/metrics", auth_header("alice:wrong")).status, 401);
  EXPECT_EQ(request(t.port(), "/metrics", auth_header("mallory:s3cret")).status, 401);
  EXPECT_EQ(request(t.port(), "/metrics", "Authorization: Basic %%%\r\n").status, 401);
  EXPECT_EQ(request(t.port(), "/metrics", "Authorization: Digest x\r\n").status, 401);
  // CVE-2022-46146: a user name built from a cached user and its hash.
  EXPECT_EQ(request(t.port(), "/metrics", auth_header("alice" + hash + ":s3cret")).status, 401);
  // An unknown path answers 401 too, so paths are not probed without credentials.
  EXPECT_EQ(request(t.port(), "/secret").status, 401);
  EXPECT_EQ(t.server().counters()->rejections().at("unauthorized"), 7u);
  EXPECT_EQ(t.server().security_warning(), "");  // loopback
}

TEST(HttpAuth, WebConfigReloadsOnChange) {
  std::string file;
  TestServer t(with_config("basic_auth_users:\n  alice: " + bcrypt_hash("a") + "\n", &file));
  ASSERT_EQ(t.start(), "");
  EXPECT_EQ(request(t.port(), "/metrics", auth_header("alice:a")).status, 200);
  write_file(file, "basic_auth_users:\n  bob: " + bcrypt_hash("b") + "\n# changed size\n");
  EXPECT_EQ(request(t.port(), "/metrics", auth_header("alice:a")).status, 401);
  EXPECT_EQ(request(t.port(), "/metrics", auth_header("bob:b")).status, 200);
  write_file(file, "basic_auth_users: [broken\n");
  EXPECT_EQ(request(t.port(), "/metrics", auth_header("bob:b")).status, 200);
  bool logged = false;
  for (const auto& line : t.logs()) logged |= line.find("not reloaded") != std::string::npos;
  EXPECT_TRUE(logged);
}

std::string tls_yaml(const std::string& extra = "") {
  const auto& c = test_certs();
  return "tls_server_config:\n  cert_file: " + c.server_cert + "\n  key_file: " + c.server_key +
         "\n" + extra;
}

TEST(HttpTls, ServesOverTlsAndRefusesPlainHttp) {
  if (!test_certs().ok) GTEST_SKIP() << "openssl not installed";
  TestServer t(with_config(tls_yaml()));
  ASSERT_EQ(t.start(), "");
  std::string error;
  auto reply = testing::parse_reply(tls_exchange(t.port(), kGet, {}, error));
  EXPECT_EQ(error, "");
  EXPECT_EQ(reply.status, 200);
  EXPECT_EQ(reply.body, testing::kExposition);
  // Plain HTTP on the TLS port: the connection is closed without an answer; the server goes on.
  EXPECT_EQ(testing::exchange(t.port(), kGet, std::chrono::milliseconds(2000)), "");
  reply = testing::parse_reply(tls_exchange(t.port(), kGet, {}, error));
  EXPECT_EQ(reply.status, 200);
}

TEST(HttpTls, ClientClosingMidResponse) {
  if (!test_certs().ok) GTEST_SKIP() << "openssl not installed";
  TestServer t(with_config(tls_yaml()));
  ASSERT_EQ(t.start(), "");
  testing::TlsClient impatient;
  impatient.stop_after_bytes = 1;
  for (int i = 0; i < 10; ++i) {
    std::string error;
    const auto raw =
        tls_exchange(t.port(), "GET /big HTTP/1.1\r\nHost: x\r\n\r\n", impatient, error);
    EXPECT_LT(raw.size(), 8u << 20);
  }
  std::string error;
  EXPECT_EQ(testing::parse_reply(tls_exchange(t.port(), kGet, {}, error)).status, 200);
}

TEST(HttpTls, CertificateReloadsWhenItsFilesChange) {
  const auto& c = test_certs();
  if (!c.ok) GTEST_SKIP() << "openssl not installed";
  const auto dir = testing::temp_dir();
  auto copy = [](const std::string& from, const std::string& to) {
    std::ifstream in(from, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    write_file(to, text.str());
  };
  copy(c.server_cert, dir + "/tls.crt");
  copy(c.server_key, dir + "/tls.key");
  TestServer t(with_config("tls_server_config:\n  cert_file: " + dir +
                           "/tls.crt\n  key_file: " + dir + "/tls.key\n"));
  ASSERT_EQ(t.start(), "");
  auto subject = [&] {
    std::string dn;
    std::string error;
    testing::TlsClient client;
    client.peer_subject = &dn;
    const auto status = testing::parse_reply(tls_exchange(t.port(), kGet, client, error)).status;
    EXPECT_EQ(status, 200) << error;
    return dn;
  };
  EXPECT_EQ(subject(), "CN=127.0.0.1");
  // The certificate first, its key a moment later: in between the old pair stays in use.
  copy(c.other_cert, dir + "/tls.crt");
  EXPECT_EQ(subject(), "CN=127.0.0.1");
  copy(c.other_key, dir + "/tls.key");
  EXPECT_EQ(subject(), "CN=rotated");
  int reloaded = 0;
  int kept = 0;
  for (const auto& line : t.logs()) {
    reloaded += line.find("TLS certificate reloaded") != std::string::npos;
    kept += line.find("TLS certificate not reloaded") != std::string::npos;
  }
  EXPECT_EQ(reloaded, 1);
  EXPECT_EQ(kept, 1);
}

TEST(HttpTls, MinVersionIsEnforced) {
  if (!test_certs().ok) GTEST_SKIP() << "openssl not installed";
  TestServer t(with_config(tls_yaml("  min_version: TLS13\n")));
  ASSERT_EQ(t.start(), "");
  std::string error;
  testing::TlsClient tls12;
  tls12.priorities = "NORMAL:-VERS-ALL:+VERS-TLS1.2";
  EXPECT_EQ(tls_exchange(t.port(), kGet, tls12, error), "");
  EXPECT_NE(error, "");
  testing::TlsClient tls11;
  tls11.priorities = "NORMAL:-VERS-ALL:+VERS-TLS1.1";
  error.clear();
  EXPECT_EQ(tls_exchange(t.port(), kGet, tls11, error), "");
  EXPECT_NE(error, "");
  error.clear();
  EXPECT_EQ(testing::parse_reply(tls_exchange(t.port(), kGet, {}, error)).status, 200) << error;
}

TEST(HttpTls, RequireAndVerifyClientCert) {
  const auto& c = test_certs();
  if (!c.ok) GTEST_SKIP() << "openssl not installed";
  TestServer t(
      with_config(tls_yaml("  client_auth_type: RequireAndVerifyClientCert\n"
                           "  client_ca_file: " +
                           c.ca + "\n")));
  ASSERT_EQ(t.start(), "");
  auto status = [&](const testing::TlsClient& client) {
    std::string error;
    return testing::parse_reply(tls_exchange(t.port(), kGet, client, error)).status;
  };
  testing::TlsClient good;
  good.cert_file = c.client_cert;
  good.key_file = c.client_key;
  EXPECT_EQ(status(good), 200);
  testing::TlsClient rogue;
  rogue.cert_file = c.rogue_cert;
  rogue.key_file = c.rogue_key;
  // libmicrohttpd asks for a certificate without requiring one: the guard answers 403.
  EXPECT_EQ(status(rogue), 403);
  EXPECT_EQ(status({}), 403);
  EXPECT_EQ(t.server().counters()->rejections().at("client_cert"), 2u);
}

TEST(HttpTls, TlsWithAuthDoesNotWarnBeyondLoopback) {
  if (!test_certs().ok) GTEST_SKIP() << "openssl not installed";
  auto options =
      with_config(tls_yaml() + "basic_auth_users:\n  alice: " + bcrypt_hash("pw") + "\n");
  options.listen_address = "0.0.0.0:0";
  TestServer t(options);
  ASSERT_EQ(t.start(), "");
  EXPECT_EQ(t.server().security_warning(), "");
}

}  // namespace
}  // namespace gpumon
