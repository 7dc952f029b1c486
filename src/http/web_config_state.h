// SPDX-License-Identifier: MIT
// The web config in force, re-read when its file changes (checked with stat() on each
// request, as exporter-toolkit re-reads per request). A change that does not parse is logged
// once and the last good config stays. TLS settings are applied when the server starts: a
// changed tls_server_config is logged and takes effect at the next start (new contents of the
// certificate and key files are picked up by TlsCertificateStore without a restart).
//
// Thread-safety: current() may be called from any thread.
#pragma once

#include <sys/stat.h>

#include <memory>
#include <mutex>
#include <string>

#include "http/basic_auth.h"
#include "http/http_types.h"
#include "http/web_config.h"

namespace gpumon {

class WebConfigState {
 public:
  struct Snapshot {
    WebConfig config;
    std::shared_ptr<BasicAuth> auth;  // never null; disabled without users
  };

  /// `file` empty: no web config (no TLS, no auth, no extra headers).
  WebConfigState(std::string file, LogFunction log);

  /// The first load; returns "" or the error (file, key, problem).
  std::string load();

  /// The config in force, after a reload if the file changed since the last call.
  std::shared_ptr<const Snapshot> current();

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
  FileId stat_file() const;
  static std::shared_ptr<const Snapshot> make(WebConfig config);

  std::string file_;
  LogFunction log_;
  std::mutex mutex_;
  FileId seen_;  // the file as last read, good or bad
  std::shared_ptr<const Snapshot> current_;
};

}  // namespace gpumon
