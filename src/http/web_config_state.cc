// SPDX-License-Identifier: MIT
#include "http/web_config_state.h"

namespace gpumon {
namespace {

// Everything but the certificate and key contents, which TlsCertificateStore reloads itself.
bool same_tls_settings(const std::optional<TlsServerConfig>& a,
                       const std::optional<TlsServerConfig>& b) {
  if (!a || !b) return a.has_value() == b.has_value();
  return a->cert_file == b->cert_file && a->key_file == b->key_file &&
         a->client_ca_file == b->client_ca_file && a->client_ca_pem == b->client_ca_pem &&
         a->require_client_cert == b->require_client_cert && a->min_version == b->min_version &&
         a->max_version == b->max_version;
}

}  // namespace

WebConfigState::WebConfigState(std::string file, LogFunction log)
    : file_(std::move(file)), log_(std::move(log)), current_(make(WebConfig{})) {}

std::shared_ptr<const WebConfigState::Snapshot> WebConfigState::make(WebConfig config) {
  auto snapshot = std::make_shared<Snapshot>();
  snapshot->auth = std::make_shared<BasicAuth>(config.basic_auth_users);
  snapshot->config = std::move(config);
  return snapshot;
}

WebConfigState::FileId WebConfigState::stat_file() const {
  struct stat st {};
  if (::stat(file_.c_str(), &st) != 0) return FileId{};
  return FileId{st.st_ino, st.st_size, st.st_mtim};
}

std::string WebConfigState::load() {
  if (file_.empty()) return "";
  std::lock_guard lock(mutex_);
  seen_ = stat_file();
  WebConfig config;
  auto error = load_web_config(file_, config);
  if (!error.empty()) return error;
  current_ = make(std::move(config));
  return "";
}

std::shared_ptr<const WebConfigState::Snapshot> WebConfigState::current() {
  std::lock_guard lock(mutex_);
  if (file_.empty()) return current_;
  const FileId now = stat_file();
  if (now == seen_) return current_;
  seen_ = now;
  WebConfig config;
  const auto error = load_web_config(file_, config);
  if (!error.empty()) {
    if (log_) log_("web config not reloaded, the previous one stays: " + error);
    return current_;
  }
  if (!same_tls_settings(config.tls, current_->config.tls)) {
    if (log_) {
      log_(file_ + ": tls_server_config changed: it takes effect at the next start (renewed " +
           "certificate and key files are reloaded without one)");
    }
    config.tls = current_->config.tls;
  }
  current_ = make(std::move(config));
  if (log_) log_(file_ + ": web config reloaded");
  return current_;
}

}  // namespace gpumon
