// SPDX-License-Identifier: MIT
// HttpServer's state, shared by http_server.cc (daemon life) and http_dispatch.cc (requests).
#pragma once

#include <microhttpd.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "http/http_server.h"
#include "http/listen_address.h"
#include "http/tls_certificate_store.h"
#include "http/web_config_state.h"

namespace gpumon {

struct HttpServer::Impl {
  ServerOptions options;
  Handler handler;
  ListenAddress address;
  std::unique_ptr<WebConfigState> web_config;
  std::optional<TlsServerConfig> tls;  // as started; MHD keeps pointers into it
  std::unique_ptr<detail::TlsCertificateStore> certificates;  // with tls
  std::string tls_priorities;
  MHD_Daemon* daemon = nullptr;
  std::atomic<std::uint16_t> port{0};  // read by on_accept on the workers
  std::atomic<unsigned> in_flight{0};

  // Open connections by client address (its bytes, no port; on loopback with the uid owning
  // the client's socket): the server enforces max_connections_per_ip itself, because
  // libmicrohttpd's own limit refuses without a trace and a refusal must be counted
  // (RejectReason::kPerAddress). The key is found once, in on_accept (accepted_keys, by address
  // and port), and kept per connection until it closes.
  std::mutex addresses_mutex;
  std::map<std::string, unsigned> open_per_address;
  std::unordered_map<std::string, std::string> accepted_keys;
  std::unordered_map<const MHD_Connection*, std::string> key_of_connection;

  std::mutex start_log_mutex;
  std::string start_log;  // MHD's messages while starting
  std::atomic<bool> starting{false};

  /// The MHD access handler (http_dispatch.cc).
  static MHD_Result on_request(void* cls, MHD_Connection* connection, const char* url,
                               const char* method, const char* version, const char* upload_data,
                               std::size_t* upload_data_size, void** request_state);
};

}  // namespace gpumon
