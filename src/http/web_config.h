// SPDX-License-Identifier: MIT
// The exporter-toolkit web config (--web.config.file), the YAML file node_exporter and
// dcgm-exporter read: TLS, bcrypt basic auth, extra response headers. Format and limits in
// docs/exporter.md, "HTTP server and security".
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gpumon {

struct TlsServerConfig {
  std::string cert_file;  // as written, resolved against the config file's folder
  std::string key_file;
  std::string client_ca_file;
  std::string cert_pem;  // file contents, checked to load as a certificate/key pair
  std::string key_pem;
  std::string client_ca_pem;
  bool require_client_cert = false;  // client_auth_type: RequireAndVerifyClientCert
  int min_version = 12;              // 12 = TLS 1.2, 13 = TLS 1.3
  int max_version = 13;

  /// The GnuTLS priority string for the allowed versions.
  std::string gnutls_priorities() const;
  bool operator==(const TlsServerConfig&) const = default;
};

struct WebConfig {
  std::optional<TlsServerConfig> tls;
  std::map<std::string, std::string> basic_auth_users;  // user -> bcrypt hash
  std::vector<std::pair<std::string, std::string>> headers;
};

/// Parses `yaml` (the contents of `file`, used in messages and to resolve relative paths) and
/// reads the files it names. Returns "" or an error "FILE: KEY: PROBLEM". Unknown keys are
/// errors, as in exporter-toolkit; keys gpumon does not implement are named as such.
std::string parse_web_config(const std::string& yaml, const std::string& file, WebConfig& out);

/// Reads `file` and parses it.
std::string load_web_config(const std::string& file, WebConfig& out);

/// True for a bcrypt hash "$2a$", "$2b$" or "$2y$" with cost 4-31 and 53 salt+hash characters.
bool is_bcrypt_hash(const std::string& hash);

}  // namespace gpumon
