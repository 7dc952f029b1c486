// SPDX-License-Identifier: MIT
// The HTTP(S) server of `gpumon serve`: libmicrohttpd with a pool of epoll worker threads,
// hardened against hostile clients, with exporter-toolkit's web config (TLS, basic auth,
// headers). Limits and their reasons: docs/exporter.md, "HTTP server and security".
//
// Thread-safety: start(), stop() and the destructor from one thread; port(), counters() and
// security_warning() from any thread after start(). The handler runs on worker threads.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "http/http_counters.h"
#include "http/http_types.h"

namespace gpumon {

class HttpServer {
 public:
  HttpServer(ServerOptions options, Handler handler);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  /// Reads the web config, binds and starts serving. Returns "" or an error a user can act on
  /// (bad listen address, web config problem naming file and key, port in use).
  std::string start();
  /// Closes every connection and joins the workers; idempotent.
  void stop();

  /// The bound port (the kernel's choice when the listen address had port 0); 0 before start.
  std::uint16_t port() const;
  /// Non-empty when listening beyond loopback without TLS or without basic auth.
  std::string security_warning() const;
  std::shared_ptr<HttpCounters> counters() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

/// The warning for `listen` (a parsed-or-not listen address) given what the web config has.
std::string insecure_listen_warning(const std::string& listen, bool loopback, bool tls, bool auth);

}  // namespace gpumon
