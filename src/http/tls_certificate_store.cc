// SPDX-License-Identifier: MIT
#include "http/tls_certificate_store.h"

#include <fstream>
#include <sstream>

namespace gpumon::detail {
namespace {

gnutls_datum_t datum(const std::string& text) {
  return gnutls_datum_t{reinterpret_cast<unsigned char*>(const_cast<char*>(text.data())),
                        static_cast<unsigned>(text.size())};
}

bool read_text(const std::string& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream text;
  text << in.rdbuf();
  out = text.str();
  return true;
}

}  // namespace

TlsKeyPair::~TlsKeyPair() {
  for (unsigned i = 0; i < chain_length; ++i) gnutls_pcert_deinit(&chain[i]);
  if (key) gnutls_privkey_deinit(key);
}

std::string check_key_pair_pem(const std::string& cert_pem, const std::string& key_pem) {
  gnutls_certificate_credentials_t creds = nullptr;
  if (gnutls_certificate_allocate_credentials(&creds) < 0) return "out of memory";
  const auto cert = datum(cert_pem);
  const auto key = datum(key_pem);
  const int rc = gnutls_certificate_set_x509_key_mem(creds, &cert, &key, GNUTLS_X509_FMT_PEM);
  gnutls_certificate_free_credentials(creds);
  return rc < 0 ? gnutls_strerror(rc) : "";
}

TlsCertificateStore::TlsCertificateStore(std::string cert_file, std::string key_file,
                                         LogFunction log)
    : cert_file_(std::move(cert_file)), key_file_(std::move(key_file)), log_(std::move(log)) {}

TlsCertificateStore::FileId TlsCertificateStore::stat_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return FileId{};
  return FileId{st.st_ino, st.st_size, st.st_mtim};
}

std::string TlsCertificateStore::read_pair(std::unique_ptr<TlsKeyPair>& out) const {
  std::string cert_pem;
  std::string key_pem;
  if (!read_text(cert_file_, cert_pem)) return "cannot read '" + cert_file_ + "'";
  if (!read_text(key_file_, key_pem)) return "cannot read '" + key_file_ + "'";
  if (auto error = check_key_pair_pem(cert_pem, key_pem); !error.empty()) {
    return "'" + cert_file_ + "' and '" + key_file_ +
           "' are not a certificate and its key: " + error;
  }
  auto pair = std::make_unique<TlsKeyPair>();
  const auto cert = datum(cert_pem);
  const auto key = datum(key_pem);
  pair->chain_length = TlsKeyPair::kMaxChain;
  int rc = gnutls_pcert_list_import_x509_raw(pair->chain, &pair->chain_length, &cert,
                                             GNUTLS_X509_FMT_PEM, 0);
  if (rc < 0) {
    pair->chain_length = 0;
    return "'" + cert_file_ + "': " + gnutls_strerror(rc);
  }
  gnutls_privkey_init(&pair->key);
  rc = gnutls_privkey_import_x509_raw(pair->key, &key, GNUTLS_X509_FMT_PEM, nullptr, 0);
  if (rc < 0) return "'" + key_file_ + "': " + gnutls_strerror(rc);
  out = std::move(pair);
  return "";
}

std::string TlsCertificateStore::load() {
  std::lock_guard lock(mutex_);
  cert_seen_ = stat_file(cert_file_);
  key_seen_ = stat_file(key_file_);
  std::unique_ptr<TlsKeyPair> pair;
  if (auto error = read_pair(pair); !error.empty()) return error;
  pairs_.push_back(std::move(pair));
  return "";
}

const TlsKeyPair* TlsCertificateStore::current() {
  std::lock_guard lock(mutex_);
  const auto cert_now = stat_file(cert_file_);
  const auto key_now = stat_file(key_file_);
  if (!(cert_now == cert_seen_ && key_now == key_seen_)) {
    cert_seen_ = cert_now;
    key_seen_ = key_now;
    std::unique_ptr<TlsKeyPair> pair;
    // A certificate and key are often renewed one file after the other: a mismatch in between
    // keeps the previous pair, and the next change is tried again.
    if (auto error = read_pair(pair); !error.empty()) {
      if (log_) log_("TLS certificate not reloaded, the previous one stays: " + error);
    } else {
      pairs_.push_back(std::move(pair));
      if (log_) log_("TLS certificate reloaded from '" + cert_file_ + "'");
    }
  }
  return pairs_.empty() ? nullptr : pairs_.back().get();
}

}  // namespace gpumon::detail
