// SPDX-License-Identifier: MIT
// A server for tests on 127.0.0.1 and a free port, with a few routes: /metrics (an
// exposition), / (HTML), /big (8 MiB), /slow (waits until released, at the latest by the
// destructor), /throw.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>

#include "http/http_server.h"

namespace gpumon::testing {

inline const std::string kExposition = "# TYPE gpumon_up gauge\ngpumon_up 1\n";
inline const std::string kMetricsType = "text/plain; version=0.0.4; charset=utf-8";

class TestServer {
 public:
  explicit TestServer(ServerOptions options = {}) {
    options.listen_address =
        options.listen_address == "127.0.0.1:9477" ? "127.0.0.1:0" : options.listen_address;
    options.paths = {"/", "/metrics", "/big", "/slow", "/throw"};
    options.log = [this](std::string_view line) {
      std::lock_guard lock(mutex_);
      logs_.emplace_back(line);
    };
    big_ = std::make_shared<const std::string>(8 << 20, 'x');
    metrics_ = std::make_shared<const std::string>(kExposition);
    server_ = std::make_unique<HttpServer>(options, [this](const Request& r) { return handle(r); });
  }

  ~TestServer() {
    release();
    server_.reset();
  }

  std::string start() { return server_->start(); }
  HttpServer& server() { return *server_; }
  std::uint16_t port() const { return server_->port(); }

  /// Lets the requests waiting in /slow finish.
  void release() {
    std::lock_guard lock(mutex_);
    released_ = true;
    cv_.notify_all();
  }
  int slow_waiting() const { return slow_waiting_; }
  Request last_request() {
    std::lock_guard lock(mutex_);
    return last_;
  }
  std::vector<std::string> logs() {
    std::lock_guard lock(mutex_);
    return logs_;
  }

 private:
  Response handle(const Request& request) {
    {
      std::lock_guard lock(mutex_);
      last_ = request;
    }
    if (request.path == "/metrics") {
      Response r;
      r.content_type = kMetricsType;
      r.body = metrics_;
      return r;
    }
    if (request.path == "/big") {
      Response r;
      r.body = big_;
      return r;
    }
    if (request.path == "/slow") {
      std::unique_lock lock(mutex_);
      ++slow_waiting_;
      cv_.wait(lock, [this] { return released_; });  // the destructor releases too
      --slow_waiting_;
      return Response::text(200, "slow\n");
    }
    if (request.path == "/throw") throw std::runtime_error("handler bug");
    auto r =
        Response::text(200, "<!doctype html><title>gpumon</title>\n", "text/html; charset=utf-8");
    r.headers.emplace_back("Cache-Control", "max-age=60");
    return r;
  }

  std::mutex mutex_;
  std::condition_variable cv_;
  bool released_ = false;
  std::atomic<int> slow_waiting_{0};
  Request last_;
  std::vector<std::string> logs_;
  std::shared_ptr<const std::string> big_;
  std::shared_ptr<const std::string> metrics_;
  std::unique_ptr<HttpServer> server_;
};

}  // namespace gpumon::testing
