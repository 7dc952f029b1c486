// SPDX-License-Identifier: MIT
// The server certificate and key, re-read when their files change, so a renewed certificate
// is served without a restart (exporter-toolkit reads them on each handshake). libmicrohttpd
// asks for them on each TLS handshake through its certificate callback.
//
// Thread-safety: current() may be called from any thread. Every pair loaded stays alive until
// the store is destroyed, because a handshake in progress may still use the previous one.
#pragma once

#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>
#include <sys/stat.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "http/http_types.h"

namespace gpumon::detail {

struct TlsKeyPair {
  static constexpr unsigned kMaxChain = 16;
  gnutls_pcert_st chain[kMaxChain]{};
  unsigned chain_length = 0;
  gnutls_privkey_t key = nullptr;
  TlsKeyPair() = default;
  TlsKeyPair(const TlsKeyPair&) = delete;
  TlsKeyPair& operator=(const TlsKeyPair&) = delete;
  ~TlsKeyPair();
};

class TlsCertificateStore {
 public:
  TlsCertificateStore(std::string cert_file, std::string key_file, LogFunction log);

  /// The first load; returns "" or the error naming the file.
  std::string load();

  /// The pair in force, after a reload if either file changed. A change that does not load is
  /// logged once and the previous pair stays. Null only before a successful load().
  const TlsKeyPair* current();

 private:
  struct FileId {
    ino_t inode = 0;
    off_t size = -1;
    timespec mtime{};
    bool operator==(const FileId& o) const {
      return inode == o.inode && size == o.size && mtime.tv_sec == o.mtime.tv_sec &&
             mtime.tv_nsec == o.mtime.tv_nsec;
    }
  };
  static FileId stat_file(const std::string& path);
  std::string read_pair(std::unique_ptr<TlsKeyPair>& out) const;

  std::string cert_file_;
  std::string key_file_;
  LogFunction log_;
  std::mutex mutex_;
  FileId cert_seen_;
  FileId key_seen_;
  std::vector<std::unique_ptr<TlsKeyPair>> pairs_;  // the last one is in force
};

/// "" when `cert_pem` holds a certificate (chain) and `key_pem` its private key, otherwise
/// GnuTLS's reason.
std::string check_key_pair_pem(const std::string& cert_pem, const std::string& key_pem);

}  // namespace gpumon::detail
