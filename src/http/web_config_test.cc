// SPDX-License-Identifier: MIT
#include "http/web_config.h"

#include <gtest/gtest.h>

#include "http/test_client.h"
#include "http/web_config_state.h"

namespace gpumon {
namespace {

using testing::test_certs;
using testing::write_file;

const char* kHash = "$2y$10$X0h1gDsPszWURQaxFh.zoubFi6DXncSjhoQNJgRrnGs7EsimhC7zG";

std::string parse(const std::string& yaml, WebConfig& out) {
  return parse_web_config(yaml, "/etc/gpumon/web.yml", out);
}

TEST(WebConfig, EmptyFileIsNoConfig) {
  WebConfig c;
  EXPECT_EQ(parse("", c), "");
  EXPECT_FALSE(c.tls);
  EXPECT_TRUE(c.basic_auth_users.empty());
}

TEST(WebConfig, BasicAuthUsersAndHeaders) {
  WebConfig c;
  ASSERT_EQ(parse(std::string("basic_auth_users:\n  alice: ") + kHash +
                      "\nhttp_server_config:\n  http2: true\n  headers:\n"
                      "    X-Frame-Options: sameorigin\n"
                      "    Strict-Transport-Security: max-age=31536000\n",
                  c),
            "");
  EXPECT_EQ(c.basic_auth_users.at("alice"), kHash);
  ASSERT_EQ(c.headers.size(), 2u);
  EXPECT_EQ(c.headers[0].first, "X-Frame-Options");
  EXPECT_EQ(c.headers[0].second, "sameorigin");
}

TEST(WebConfig, BadYamlNamesTheFile) {
  WebConfig c;
  const auto error = parse("basic_auth_users: [unclosed\n", c);
  EXPECT_NE(error.find("/etc/gpumon/web.yml: not valid YAML"), std::string::npos) << error;
}

TEST(WebConfig, UnknownAndUnsupportedKeysAreErrors) {
  WebConfig c;
  auto error = parse("basic_auth_user:\n  alice: x\n", c);
  EXPECT_NE(error.find("basic_auth_user (line 1): unknown key"), std::string::npos) << error;
  error = parse("tls_server_config:\n  cert_file: a\n  key_file: b\n  cipher_suites: [x]\n", c);
  EXPECT_NE(error.find("tls_server_config.cipher_suites (line 4): not supported"),
            std::string::npos)
      << error;
  error = parse("http_server_config:\n  headers:\n    Server: gpumon\n", c);
  EXPECT_NE(error.find("http_server_config.headers.Server"), std::string::npos) << error;
  error = parse("http_server_config:\n  headers:\n    X-Content-Type-Options: sniff\n", c);
  EXPECT_NE(error.find("invalid value 'sniff'"), std::string::npos) << error;
}

TEST(WebConfig, BadBcryptHash) {
  WebConfig c;
  auto error = parse("basic_auth_users:\n  alice: secret\n", c);
  EXPECT_NE(error.find("basic_auth_users.alice (line 2): not a bcrypt hash"), std::string::npos)
      << error;
  EXPECT_TRUE(c.basic_auth_users.empty());
  EXPECT_FALSE(is_bcrypt_hash("$2y$03$X0h1gDsPszWURQaxFh.zoubFi6DXncSjhoQNJgRrnGs7EsimhC7zG"));
  EXPECT_FALSE(is_bcrypt_hash("$2x$10$X0h1gDsPszWURQaxFh.zoubFi6DXncSjhoQNJgRrnGs7EsimhC7zG"));
  EXPECT_FALSE(is_bcrypt_hash("$2y$10$X0h1gDsPszWURQaxFh.zoubFi6DXncSjhoQNJgRrnGs7EsimhC7z!"));
  EXPECT_TRUE(is_bcrypt_hash(kHash));
}

TEST(WebConfig, MissingCertFile) {
  WebConfig c;
  const auto error = parse("tls_server_config:\n  cert_file: missing.pem\n  key_file: k.pem\n", c);
  EXPECT_NE(error.find("tls_server_config.cert_file: cannot read '/etc/gpumon/missing.pem'"),
            std::string::npos)
      << error;
  EXPECT_NE(parse("tls_server_config:\n  cert_file: c.pem\n", c).find("key_file: missing"),
            std::string::npos);
}

TEST(WebConfig, TlsFilesAreLoadedAndChecked) {
  const auto& certs = test_certs();
  if (!certs.ok) GTEST_SKIP() << "openssl not installed";
  WebConfig c;
  const auto dir = certs.dir + "/web.yml";
  ASSERT_EQ(parse_web_config("tls_server_config:\n  cert_file: server.pem\n  key_file: "
                             "server.key\n  min_version: TLS13\n",
                             dir, c),
            "");
  ASSERT_TRUE(c.tls);
  EXPECT_EQ(c.tls->min_version, 13);
  EXPECT_EQ(c.tls->gnutls_priorities(), "NORMAL:-VERS-ALL:+VERS-TLS1.3");
  EXPECT_NE(c.tls->cert_pem.find("BEGIN CERTIFICATE"), std::string::npos);
  // A key that does not belong to the certificate.
  auto error = parse_web_config(
      "tls_server_config:\n  cert_file: server.pem\n  key_file: client.key\n", dir, c);
  EXPECT_NE(error.find("cert_file/key_file"), std::string::npos) << error;
  error = parse_web_config(
      "tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n"
      "  min_version: TLS11\n",
      dir, c);
  EXPECT_NE(error.find("TLS11 is not allowed"), std::string::npos) << error;
  error = parse_web_config(
      "tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n"
      "  client_ca_file: ca.pem\n",
      dir, c);
  EXPECT_NE(error.find("without a client_auth_type"), std::string::npos) << error;
  error = parse_web_config(
      "tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n"
      "  client_auth_type: RequireAndVerifyClientCert\n",
      dir, c);
  EXPECT_NE(error.find("client_ca_file: missing"), std::string::npos) << error;
  error = parse_web_config(
      "tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n"
      "  client_auth_type: RequestClientCert\n",
      dir, c);
  EXPECT_NE(error.find("'RequestClientCert' is not supported"), std::string::npos) << error;
}

TEST(WebConfigState, ReloadKeepsTheLastGoodConfig) {
  const auto dir = testing::temp_dir();
  const auto file = dir + "/web.yml";
  write_file(file, std::string("basic_auth_users:\n  alice: ") + kHash + "\n");
  std::vector<std::string> logs;
  WebConfigState state(file, [&](std::string_view line) { logs.emplace_back(line); });
  ASSERT_EQ(state.load(), "");
  EXPECT_EQ(state.current()->config.basic_auth_users.count("alice"), 1u);

  write_file(file, "basic_auth_users: {bob: not-a-hash}\n");
  EXPECT_EQ(state.current()->config.basic_auth_users.count("alice"), 1u);
  ASSERT_EQ(logs.size(), 1u);
  EXPECT_NE(logs[0].find("not reloaded"), std::string::npos);
  EXPECT_NE(logs[0].find("basic_auth_users.bob"), std::string::npos);
  state.current();  // the same bad file is not parsed (nor logged) again
  EXPECT_EQ(logs.size(), 1u);

  write_file(file, std::string("basic_auth_users:\n  bob:   ") + kHash + "\n");
  EXPECT_EQ(state.current()->config.basic_auth_users.count("bob"), 1u);
  EXPECT_EQ(state.current()->config.basic_auth_users.count("alice"), 0u);
}

}  // namespace
}  // namespace gpumon
