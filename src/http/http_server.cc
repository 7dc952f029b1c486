// SPDX-License-Identifier: MIT
#include "http/http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <vector>

#include "http/http_server_impl.h"
#include "http/loopback_peer.h"

namespace gpumon {
namespace {

void mhd_log(void* cls, const char* format, va_list args) {
  auto* impl = static_cast<HttpServer::Impl*>(cls);
  // After start-up MHD's messages are about clients (bad requests, resets): an attacker could
  // flood the log with them, so only start-up messages are kept.
  if (!impl->starting.load()) return;
  char line[512];
  std::vsnprintf(line, sizeof line, format, args);
  std::lock_guard lock(impl->start_log_mutex);
  impl->start_log += line;
}

std::string address_bytes(const sockaddr* addr) {
  if (addr == nullptr) return {};
  if (addr->sa_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(addr);
    return std::string(reinterpret_cast<const char*>(&in->sin_addr), sizeof in->sin_addr);
  }
  if (addr->sa_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(addr);
    return std::string(reinterpret_cast<const char*>(&in6->sin6_addr), sizeof in6->sin6_addr);
  }
  return {};
}

// The address with its port: which connection this is, between on_accept and on_connection.
std::string endpoint_bytes(const sockaddr* addr) {
  if (addr == nullptr) return {};
  const auto port = addr->sa_family == AF_INET
                        ? reinterpret_cast<const sockaddr_in*>(addr)->sin_port
                        : reinterpret_cast<const sockaddr_in6*>(addr)->sin6_port;
  return address_bytes(addr) + std::string(reinterpret_cast<const char*>(&port), sizeof port);
}

// Who the per-address limit counts a connection against: its address, and on loopback, where
// every local user shares 127.0.0.1, the user owning the client's socket too (loopback_peer.h),
// so that one local user holding connections does not lock the others' scrapes out.
std::string limit_key(const HttpServer::Impl& impl, const sockaddr* client) {
  std::string key = address_bytes(client);
  if (!detail::is_loopback(client)) return key;
  // The address the client connected to: the one listened on, or for a wildcard bind most
  // likely its own (a loopback client's source is the address it connects to).
  sockaddr_storage server = impl.address.address;
  const sockaddr* to = reinterpret_cast<const sockaddr*>(&server);
  if (impl.address.any) {
    std::memcpy(&server, client,
                client->sa_family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6));
  }
  if (server.ss_family == AF_INET)
    reinterpret_cast<sockaddr_in*>(&server)->sin_port = htons(impl.port.load());
  else
    reinterpret_cast<sockaddr_in6*>(&server)->sin6_port = htons(impl.port.load());
  if (const auto uid = detail::loopback_peer_uid(client, to)) key += "uid=" + std::to_string(*uid);
  return key;
}

// Refuses (and counts) a connection whose key (above) holds max_connections_per_ip. The count
// moves in on_connection, so worker threads accepting at the same instant may each let one
// more in: at most `threads` - 1 over the limit, never a slot that is not given back.
MHD_Result on_accept(void* cls, const sockaddr* addr, socklen_t) {
  auto* impl = static_cast<HttpServer::Impl*>(cls);
  const std::string key = limit_key(*impl, addr);
  {
    std::lock_guard lock(impl->addresses_mutex);
    const auto it = impl->open_per_address.find(key);
    if (it == impl->open_per_address.end() || it->second < impl->options.max_connections_per_ip) {
      // A connection MHD drops before it starts leaves its entry here: bounded, and replaced
      // when its port comes back.
      if (impl->accepted_keys.size() >= 4096) impl->accepted_keys.clear();
      impl->accepted_keys[endpoint_bytes(addr)] = key;
      return MHD_YES;
    }
  }
  impl->options.counters->count_rejection(RejectReason::kPerAddress);
  return MHD_NO;
}

// Keeps the per-key counts; and every connection's socket context is the server, so the
// certificate callback finds it.
void on_connection(void* cls, MHD_Connection* connection, void** socket_context,
                   MHD_ConnectionNotificationCode code) {
  *socket_context = cls;
  auto* impl = static_cast<HttpServer::Impl*>(cls);
  std::lock_guard lock(impl->addresses_mutex);
  if (code == MHD_CONNECTION_NOTIFY_STARTED) {
    const MHD_ConnectionInfo* info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    const sockaddr* client = info ? info->client_addr : nullptr;
    auto accepted = impl->accepted_keys.extract(endpoint_bytes(client));
    std::string key = accepted ? std::move(accepted.mapped()) : address_bytes(client);
    ++impl->open_per_address[key];
    impl->key_of_connection[connection] = std::move(key);
  } else if (auto started = impl->key_of_connection.extract(connection)) {
    if (const auto it = impl->open_per_address.find(started.mapped());
        it != impl->open_per_address.end() && --it->second == 0)
      impl->open_per_address.erase(it);
  }
}

// libmicrohttpd's certificate callback, once per TLS handshake: the current pair of the
// server's TlsCertificateStore. libmicrohttpd 0.9.75 sets the GnuTLS session's pointer to the
// connection (tested by HttpTls.CertificateReloadsWhenItsFilesChange).
int certificate_for(gnutls_session_t session, const gnutls_datum_t*, int,
                    const gnutls_pk_algorithm_t*, int, gnutls_pcert_st** chain,
                    unsigned* chain_length, gnutls_privkey_t* key) {
  auto* connection = static_cast<MHD_Connection*>(gnutls_session_get_ptr(session));
  if (!connection) return -1;
  const MHD_ConnectionInfo* info =
      MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
  if (!info || !info->socket_context) return -1;
  auto* impl = static_cast<HttpServer::Impl*>(info->socket_context);
  const detail::TlsKeyPair* pair = impl->certificates ? impl->certificates->current() : nullptr;
  if (!pair) return -1;
  *chain = const_cast<gnutls_pcert_st*>(pair->chain);
  *chain_length = pair->chain_length;
  *key = pair->key;
  return 0;
}

MHD_OptionItem item(MHD_OPTION option, intptr_t value, void* ptr = nullptr) {
  return MHD_OptionItem{option, value, ptr};
}

}  // namespace

std::string insecure_listen_warning(const std::string& listen, bool loopback, bool tls, bool auth) {
  if (loopback || (tls && auth)) return "";
  std::string missing = !tls && !auth ? "without TLS and without basic auth"
                        : !tls        ? "without TLS (basic-auth passwords cross in clear)"
                                      : "without basic auth";
  return "listening on " + listen + " beyond loopback " + missing +
         ": anyone who reaches this port can read it (set --web.config.file, see "
         "docs/exporter.md)";
}

HttpServer::HttpServer(ServerOptions options, Handler handler) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  impl_->handler = std::move(handler);
  if (!impl_->options.counters) impl_->options.counters = std::make_shared<HttpCounters>();
  if (!impl_->options.log) {
    impl_->options.log = [](std::string_view line) {
      std::cerr << "gpumon http: " << line << '\n';
    };
  }
}

HttpServer::~HttpServer() {
  stop();
}

std::string HttpServer::start() {
  auto& s = *impl_;
  if (s.daemon) return "the HTTP server is already started";
  if (auto error = parse_listen_address(s.options.listen_address, s.address); !error.empty()) {
    return error;
  }
  s.web_config = std::make_unique<WebConfigState>(s.options.web_config_file, s.options.log);
  if (auto error = s.web_config->load(); !error.empty()) return error;
  s.tls = s.web_config->current()->config.tls;

  unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG;
  if (s.address.ipv6) flags |= s.address.any ? MHD_USE_DUAL_STACK : MHD_USE_IPv6;
  std::vector<MHD_OptionItem> items = {
      item(MHD_OPTION_SOCK_ADDR, 0, &s.address.address),
      item(MHD_OPTION_CONNECTION_LIMIT, s.options.max_connections),
      item(MHD_OPTION_NOTIFY_CONNECTION, reinterpret_cast<intptr_t>(&on_connection), &s),
      item(MHD_OPTION_CONNECTION_TIMEOUT,
           static_cast<intptr_t>(s.options.connection_timeout.count())),
      item(MHD_OPTION_CONNECTION_MEMORY_LIMIT,
           static_cast<intptr_t>(s.options.connection_memory_limit)),
      item(MHD_OPTION_LISTEN_BACKLOG_SIZE, 128),
  };
  if (s.options.threads > 1) items.push_back(item(MHD_OPTION_THREAD_POOL_SIZE, s.options.threads));
  if (s.tls) {
    flags |= MHD_USE_TLS;
    s.tls_priorities = s.tls->gnutls_priorities();
    s.certificates = std::make_unique<detail::TlsCertificateStore>(s.tls->cert_file,
                                                                   s.tls->key_file, s.options.log);
    if (auto error = s.certificates->load(); !error.empty()) {
      return s.options.web_config_file + ": tls_server_config: " + error;
    }
    items.push_back(
        item(MHD_OPTION_HTTPS_CERT_CALLBACK, 0, reinterpret_cast<void*>(&certificate_for)));
    items.push_back(item(MHD_OPTION_HTTPS_PRIORITIES, 0, s.tls_priorities.data()));
    if (s.tls->require_client_cert) {
      items.push_back(item(MHD_OPTION_HTTPS_MEM_TRUST, 0, s.tls->client_ca_pem.data()));
    }
  }
  items.push_back(item(MHD_OPTION_END, 0));

  s.starting = true;
  s.start_log.clear();
  s.daemon =
      MHD_start_daemon(flags, 0, &on_accept, &s, &Impl::on_request, &s, MHD_OPTION_EXTERNAL_LOGGER,
                       &mhd_log, &s, MHD_OPTION_ARRAY, items.data(), MHD_OPTION_END);
  s.starting = false;
  if (!s.daemon) {
    std::lock_guard lock(s.start_log_mutex);
    auto detail = s.start_log;
    while (!detail.empty() && (detail.back() == '\n' || detail.back() == ' ')) detail.pop_back();
    return "cannot listen on " + s.options.listen_address + ": " +
           (detail.empty() ? std::string("libmicrohttpd refused to start") : detail);
  }
  const MHD_DaemonInfo* info = MHD_get_daemon_info(s.daemon, MHD_DAEMON_INFO_BIND_PORT);
  s.port = info ? info->port : 0;
  return "";
}

void HttpServer::stop() {
  if (!impl_ || !impl_->daemon) return;
  MHD_stop_daemon(impl_->daemon);
  impl_->daemon = nullptr;
  impl_->port = 0;
}

std::uint16_t HttpServer::port() const {
  return impl_->port;
}

std::string HttpServer::security_warning() const {
  const auto& s = *impl_;
  if (!s.web_config) return "";
  const bool auth = s.web_config->current()->auth->enabled();
  return insecure_listen_warning(s.options.listen_address, s.address.loopback, s.tls.has_value(),
                                 auth);
}

std::shared_ptr<HttpCounters> HttpServer::counters() const {
  return impl_->options.counters;
}

}  // namespace gpumon
