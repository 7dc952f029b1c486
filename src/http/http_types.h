// SPDX-License-Identifier: MIT
// The plain data the HTTP server hands to its handler and takes back, and its options.
// No libmicrohttpd type leaks out of src/http.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpumon {

/// One request that passed the guard (GET or HEAD, a known path, no body, no Range, and the
/// basic-auth check when the web config asks for one).
struct Request {
  std::string method;                          // "GET" or "HEAD"
  std::string path;                            // decoded path, e.g. "/metrics"
  std::map<std::string, std::string> query;    // decoded query parameters (last one wins)
  std::map<std::string, std::string> headers;  // request headers, names lower-cased
  std::string remote_address;                  // "127.0.0.1" or "::1"
  std::string user;                            // the basic-auth user, empty without auth

  /// The header's value, or "" when absent. `name` in lower case, e.g. "accept".
  std::string header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? std::string() : it->second;
  }
};

/// What the handler answers. The body is shared, so a pre-rendered body (a cached /metrics
/// exposition) is sent without a copy; the server holds a reference until the send ends.
/// For HEAD the server sends the headers only (Content-Length still says the body's size).
struct Response {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::shared_ptr<const std::string> body;
  /// Extra headers. `Cache-Control: no-store` is added unless one is given here.
  std::vector<std::pair<std::string, std::string>> headers;

  static Response text(int status, std::string body,
                       std::string content_type = "text/plain; charset=utf-8") {
    Response r;
    r.status = status;
    r.content_type = std::move(content_type);
    r.body = std::make_shared<const std::string>(std::move(body));
    return r;
  }
};

/// Called on the server's worker threads, possibly several at once (at most
/// ServerOptions::max_in_flight). Keep it quick (serve pre-rendered bodies): while it runs,
/// the other connections of its worker wait. Should not throw; an exception becomes a 500.
using Handler = std::function<Response(const Request&)>;

/// Receives the server's log lines (config reloads, start-up problems). Thread-safe callers.
using LogFunction = std::function<void(std::string_view line)>;

class HttpCounters;

struct ServerOptions {
  /// "host:port", "[v6]:port" or ":port" (all interfaces). Port 0 picks a free port.
  std::string listen_address = "127.0.0.1:9477";
  /// exporter-toolkit web config (TLS, basic auth, headers); empty for none.
  std::string web_config_file;
  /// The paths the handler serves, matched exactly; anything else is a 404 before the handler.
  std::vector<std::string> paths;

  /// Worker threads, each with its own epoll loop; handlers run on them.
  unsigned threads = 4;
  /// Handlers running at once; beyond it a request gets 503 (node_exporter's cap is 40).
  unsigned max_in_flight = 16;
  unsigned max_connections = 256;
  unsigned max_connections_per_ip = 64;
  /// A connection silent this long is closed. A client that trickles bytes resets it; the
  /// per-address limit is what bounds those.
  std::chrono::seconds connection_timeout{5};
  /// Per-connection buffer for the request line and headers: bounds header size and count.
  std::size_t connection_memory_limit = 32 * 1024;
  /// Longest path plus query string, in bytes; longer is a 414.
  std::size_t max_uri_bytes = 2048;

  /// Shared with the exporter, which renders it; created by the server when null.
  std::shared_ptr<HttpCounters> counters;
  /// Default: lines go to stderr prefixed "gpumon http: ".
  LogFunction log;
};

}  // namespace gpumon
