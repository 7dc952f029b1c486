// SPDX-License-Identifier: MIT
#include "http/web_config.h"

#include <gnutls/gnutls.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace gpumon {
namespace {

// Raised inside the parser only; parse_web_config turns it into its error string.
struct ConfigError {
  std::string message;
};

std::string where(const YAML::Node& node, const std::string& key) {
  const auto mark = node.Mark();
  if (mark.line < 0) return key;
  return key + " (line " + std::to_string(mark.line + 1) + ")";
}

void check_keys(const YAML::Node& map, const std::string& prefix,
                const std::set<std::string>& supported, const std::set<std::string>& unsupported) {
  if (!map.IsMap()) throw ConfigError{where(map, prefix) + ": expected a mapping"};
  for (const auto& item : map) {
    const auto key = item.first.as<std::string>();
    const auto full = prefix.empty() ? key : prefix + "." + key;
    if (unsupported.count(key)) {
      throw ConfigError{where(item.first, full) + ": not supported by gpumon"};
    }
    if (!supported.count(key)) throw ConfigError{where(item.first, full) + ": unknown key"};
  }
}

std::string scalar(const YAML::Node& node, const std::string& key) {
  if (!node.IsScalar()) throw ConfigError{where(node, key) + ": expected a string"};
  return node.as<std::string>();
}

std::string read_file(const std::string& path, const std::string& key) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError{key + ": cannot read '" + path + "': " + std::strerror(errno)};
  std::ostringstream text;
  text << in.rdbuf();
  if (text.str().empty()) throw ConfigError{key + ": '" + path + "' is empty"};
  return text.str();
}

int tls_version(const YAML::Node& node, const std::string& key) {
  const auto v = scalar(node, key);
  if (v == "TLS12") return 12;
  if (v == "TLS13") return 13;
  if (v == "TLS10" || v == "TLS11") {
    throw ConfigError{where(node, key) + ": " + v + " is not allowed (TLS12 or TLS13)"};
  }
  throw ConfigError{where(node, key) + ": unknown TLS version '" + v + "' (TLS12 or TLS13)"};
}

void check_key_pair(const TlsServerConfig& tls) {
  gnutls_certificate_credentials_t creds = nullptr;
  gnutls_certificate_allocate_credentials(&creds);
  const gnutls_datum_t cert{
      reinterpret_cast<unsigned char*>(const_cast<char*>(tls.cert_pem.data())),
      static_cast<unsigned>(tls.cert_pem.size())};
  const gnutls_datum_t key{reinterpret_cast<unsigned char*>(const_cast<char*>(tls.key_pem.data())),
                           static_cast<unsigned>(tls.key_pem.size())};
  int rc = gnutls_certificate_set_x509_key_mem(creds, &cert, &key, GNUTLS_X509_FMT_PEM);
  std::string error;
  if (rc < 0) {
    error = std::string(
                "tls_server_config: cert_file/key_file: not a PEM certificate and its "
                "key: ") +
            gnutls_strerror(rc);
  } else if (!tls.client_ca_pem.empty()) {
    const gnutls_datum_t ca{
        reinterpret_cast<unsigned char*>(const_cast<char*>(tls.client_ca_pem.data())),
        static_cast<unsigned>(tls.client_ca_pem.size())};
    rc = gnutls_certificate_set_x509_trust_mem(creds, &ca, GNUTLS_X509_FMT_PEM);
    if (rc <= 0) error = "tls_server_config.client_ca_file: no PEM certificate in it";
  }
  gnutls_certificate_free_credentials(creds);
  if (!error.empty()) throw ConfigError{error};
}

TlsServerConfig parse_tls(const YAML::Node& node, const std::filesystem::path& folder) {
  const std::string p = "tls_server_config";
  check_keys(
      node, p,
      {"cert_file", "key_file", "client_auth_type", "client_ca_file", "min_version", "max_version"},
      {"cert", "key", "client_ca", "client_allowed_sans", "cipher_suites", "curve_preferences",
       "prefer_server_cipher_suites"});
  TlsServerConfig tls;
  auto file_key = [&](const char* key) {
    if (!node[key]) return std::string();
    const auto value = scalar(node[key], p + "." + key);
    if (value.empty()) throw ConfigError{p + "." + key + ": empty path"};
    return (folder / value).string();
  };
  tls.cert_file = file_key("cert_file");
  tls.key_file = file_key("key_file");
  tls.client_ca_file = file_key("client_ca_file");
  if (tls.cert_file.empty()) throw ConfigError{p + ".cert_file: missing (TLS needs cert_file)"};
  if (tls.key_file.empty()) throw ConfigError{p + ".key_file: missing (TLS needs key_file)"};
  std::string auth = "NoClientCert";
  if (node["client_auth_type"]) auth = scalar(node["client_auth_type"], p + ".client_auth_type");
  if (auth == "RequireAndVerifyClientCert") {
    tls.require_client_cert = true;
    if (tls.client_ca_file.empty()) {
      throw ConfigError{p + ".client_ca_file: missing (RequireAndVerifyClientCert needs it)"};
    }
  } else if (auth == "NoClientCert") {
    if (!tls.client_ca_file.empty()) {
      throw ConfigError{p +
                        ".client_ca_file: client CAs are set without a client_auth_type "
                        "(use RequireAndVerifyClientCert)"};
    }
  } else {
    throw ConfigError{p + ".client_auth_type: '" + auth +
                      "' is not supported (NoClientCert or RequireAndVerifyClientCert)"};
  }
  if (node["min_version"]) tls.min_version = tls_version(node["min_version"], p + ".min_version");
  if (node["max_version"]) tls.max_version = tls_version(node["max_version"], p + ".max_version");
  if (tls.min_version > tls.max_version) {
    throw ConfigError{p + ".min_version: higher than max_version"};
  }
  tls.cert_pem = read_file(tls.cert_file, p + ".cert_file");
  tls.key_pem = read_file(tls.key_file, p + ".key_file");
  if (tls.require_client_cert) {
    tls.client_ca_pem = read_file(tls.client_ca_file, p + ".client_ca_file");
  }
  check_key_pair(tls);
  return tls;
}

bool header_value_ok(const std::string& name, const std::string& value) {
  if (value.find_first_of("\r\n") != std::string::npos || value.empty()) return false;
  if (name == "X-Content-Type-Options") return value == "nosniff";
  if (name == "X-Frame-Options") return value == "deny" || value == "sameorigin";
  return true;
}

void parse_http(const YAML::Node& node, WebConfig& out) {
  const std::string p = "http_server_config";
  check_keys(node, p, {"headers", "http2"}, {});
  // http2 is accepted for compatibility (exporter-toolkit's default); gpumon speaks HTTP/1.1.
  if (node["http2"]) scalar(node["http2"], p + ".http2");
  if (!node["headers"]) return;
  const auto& headers = node["headers"];
  static const std::set<std::string> allowed = {"Strict-Transport-Security",
                                                "X-Content-Type-Options", "X-Frame-Options",
                                                "X-XSS-Protection", "Content-Security-Policy"};
  check_keys(headers, p + ".headers", allowed, {});
  for (const auto& item : headers) {
    const auto name = item.first.as<std::string>();
    const auto value = scalar(item.second, p + ".headers." + name);
    if (!header_value_ok(name, value)) {
      throw ConfigError{where(item.second, p + ".headers." + name) + ": invalid value '" + value +
                        "'"};
    }
    out.headers.emplace_back(name, value);
  }
}

}  // namespace

bool is_bcrypt_hash(const std::string& hash) {
  if (hash.size() != 60 || hash[0] != '$' || hash[1] != '2' || hash[3] != '$' || hash[6] != '$') {
    return false;
  }
  if (hash[2] != 'a' && hash[2] != 'b' && hash[2] != 'y') return false;
  if (!std::isdigit(static_cast<unsigned char>(hash[4])) ||
      !std::isdigit(static_cast<unsigned char>(hash[5]))) {
    return false;
  }
  const int cost = (hash[4] - '0') * 10 + (hash[5] - '0');
  if (cost < 4 || cost > 31) return false;
  return std::all_of(hash.begin() + 7, hash.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '/';
  });
}

std::string TlsServerConfig::gnutls_priorities() const {
  std::string p = "NORMAL:-VERS-ALL";
  if (max_version >= 13) p += ":+VERS-TLS1.3";
  if (min_version <= 12) p += ":+VERS-TLS1.2";
  return p;
}

std::string parse_web_config(const std::string& yaml, const std::string& file, WebConfig& out) {
  out = WebConfig{};
  try {
    const YAML::Node root = YAML::Load(yaml);
    if (root.IsNull()) return "";
    check_keys(root, "", {"tls_server_config", "http_server_config", "basic_auth_users"},
               {"rate_limit"});
    const auto folder = std::filesystem::path(file).parent_path();
    if (root["tls_server_config"] && !root["tls_server_config"].IsNull()) {
      out.tls = parse_tls(root["tls_server_config"], folder);
    }
    if (root["http_server_config"] && !root["http_server_config"].IsNull()) {
      parse_http(root["http_server_config"], out);
    }
    if (const auto users = root["basic_auth_users"]; users && !users.IsNull()) {
      if (!users.IsMap()) throw ConfigError{where(users, "basic_auth_users") + ": expected a map"};
      for (const auto& item : users) {
        const auto user = item.first.as<std::string>();
        const auto key = "basic_auth_users." + user;
        if (user.empty() || user.find(':') != std::string::npos) {
          throw ConfigError{where(item.first, key) + ": a user name is non-empty without ':'"};
        }
        const auto hash = scalar(item.second, key);
        if (!is_bcrypt_hash(hash)) {
          throw ConfigError{where(item.second, key) + ": not a bcrypt hash ($2y$..., 60 chars)"};
        }
        out.basic_auth_users[user] = hash;
      }
    }
  } catch (const ConfigError& e) {
    out = WebConfig{};
    return file + ": " + e.message;
  } catch (const YAML::Exception& e) {
    out = WebConfig{};
    return file + ": not valid YAML: " + e.what();
  }
  return "";
}

std::string load_web_config(const std::string& file, WebConfig& out) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    out = WebConfig{};
    return file + ": cannot read the web config: " + std::strerror(errno);
  }
  std::ostringstream text;
  text << in.rdbuf();
  return parse_web_config(text.str(), file, out);
}

}  // namespace gpumon
