// SPDX-License-Identifier: MIT
// One request: guard, client certificate, basic auth, path allow-list, handler, response.
#include <arpa/inet.h>
#include <gnutls/gnutls.h>
#include <strings.h>

#include <algorithm>

#include "http/gzip_body.h"
#include "http/http_server_impl.h"
#include "http/request_guard.h"
#include "util/ascii_lower.h"

namespace gpumon {
namespace {

using HeaderList = std::vector<std::pair<std::string, std::string>>;

void set_header(HeaderList& headers, const std::string& name, const std::string& value) {
  for (auto& [n, v] : headers) {
    if (strcasecmp(n.c_str(), name.c_str()) == 0) {
      v = value;
      return;
    }
  }
  headers.emplace_back(name, value);
}

void free_body(void* cls) {
  delete static_cast<std::shared_ptr<const std::string>*>(cls);
}

MHD_Result send(MHD_Connection* connection, HttpCounters& counters, const WebConfig& config,
                const Response& response) {
  static const std::string kEmpty;
  const std::string& body = response.body ? *response.body : kEmpty;
  // The response keeps a reference to the shared body until libmicrohttpd has sent it.
  auto* keep = new std::shared_ptr<const std::string>(response.body);
  MHD_Response* r = MHD_create_response_from_buffer_with_free_callback_cls(
      body.size(), const_cast<char*>(body.data()), &free_body, keep);
  if (!r) {
    delete keep;
    return MHD_NO;
  }
  HeaderList headers = {{"Content-Type", response.content_type},
                        {"X-Content-Type-Options", "nosniff"},
                        {"X-Frame-Options", "deny"},
                        {"Cache-Control", "no-store"}};
  for (const auto& [name, value] : config.headers) set_header(headers, name, value);
  for (const auto& [name, value] : response.headers) set_header(headers, name, value);
  for (const auto& [name, value] : headers) {
    MHD_add_response_header(r, name.c_str(), value.c_str());  // refuses CR/LF itself
  }
  const MHD_Result result =
      MHD_queue_response(connection, static_cast<unsigned>(response.status), r);
  MHD_destroy_response(r);
  counters.count_response(response.status);
  return result;
}

// A body worth compressing goes out gzipped when the client takes gzip (Prometheus always
// does). Vary tells caches between the two that the body depends on Accept-Encoding.
void compress_if_asked(const Request& request, Response& response) {
  if (response.status != 200 || !response.body || response.body->size() < kGzipMinBytes) return;
  auto vary = std::find_if(response.headers.begin(), response.headers.end(),
                           [](const auto& h) { return strcasecmp(h.first.c_str(), "Vary") == 0; });
  if (vary != response.headers.end())
    vary->second += ", Accept-Encoding";  // the route's own Vary (/metrics: Accept) stays
  else
    response.headers.emplace_back("Vary", "Accept-Encoding");
  if (!accepts_gzip(request.header("accept-encoding"))) return;
  auto packed = gzip(*response.body);
  if (!packed) return;  // zlib failed (out of memory): the plain body still answers
  response.body = std::make_shared<const std::string>(std::move(*packed));
  response.headers.emplace_back("Content-Encoding", "gzip");
}

MHD_Result refuse(MHD_Connection* connection, HttpCounters& counters, const WebConfig& config,
                  int status, RejectReason reason, std::string body, HeaderList extra = {}) {
  counters.count_rejection(reason);
  Response response = Response::text(status, std::move(body));
  response.headers = std::move(extra);
  return send(connection, counters, config, response);
}

struct HeaderCollect {
  std::map<std::string, std::string>* headers;
  // A NUL byte in a name or value. libmicrohttpd 0.9.75 ends values at a NUL itself (the rest
  // is dropped); this refuses the request where a version passes the NUL through.
  bool nul = false;
};

MHD_Result collect_header(void* cls, MHD_ValueKind, const char* key, std::size_t key_size,
                          const char* value, std::size_t value_size) {
  auto* h = static_cast<HeaderCollect*>(cls);
  const std::string name = util::ascii_lower(std::string_view(key ? key : "", key ? key_size : 0));
  std::string text(value ? value : "", value ? value_size : 0);
  if (name.find('\0') != std::string::npos || text.find('\0') != std::string::npos) h->nul = true;
  (*h->headers)[name] = std::move(text);
  return MHD_YES;
}

bool has_body(MHD_Connection* connection) {
  const char* length = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, "Content-Length");
  return MHD_lookup_connection_value(connection, MHD_HEADER_KIND, "Transfer-Encoding") ||
         (length && std::string_view(length) != "0");
}

struct QueryCollect {
  std::map<std::string, std::string>* query;
  std::size_t bytes = 0;
};

MHD_Result collect_query(void* cls, MHD_ValueKind, const char* key, const char* value) {
  auto* q = static_cast<QueryCollect*>(cls);
  const std::string k = key ? key : "";
  const std::string v = value ? value : "";
  q->bytes += k.size() + v.size() + 2;
  (*q->query)[k] = v;
  return MHD_YES;
}

std::string remote_address(MHD_Connection* connection) {
  const MHD_ConnectionInfo* info =
      MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
  if (!info || !info->client_addr) return "";
  char text[INET6_ADDRSTRLEN] = "";
  const sockaddr* sa = info->client_addr;
  if (sa->sa_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(sa)->sin_addr, text, sizeof text);
  } else if (sa->sa_family == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(sa)->sin6_addr, text, sizeof text);
  }
  return text;
}

// With client_ca_file, libmicrohttpd asks for a client certificate; here it must exist and
// verify against the configured CA.
bool client_cert_verified(MHD_Connection* connection) {
  const MHD_ConnectionInfo* info =
      MHD_get_connection_info(connection, MHD_CONNECTION_INFO_GNUTLS_SESSION);
  if (!info || !info->tls_session) return false;
  auto session = static_cast<gnutls_session_t>(info->tls_session);
  unsigned count = 0;
  if (!gnutls_certificate_get_peers(session, &count) || count == 0) return false;
  unsigned status = 0;
  return gnutls_certificate_verify_peers2(session, &status) == GNUTLS_E_SUCCESS && status == 0;
}

// Counts the handlers running; released on every path out of on_request.
class InFlight {
 public:
  InFlight(std::atomic<unsigned>& counter, unsigned limit) : counter_(counter) {
    admitted_ = counter_.fetch_add(1) < limit;
  }
  ~InFlight() { counter_.fetch_sub(1); }
  bool admitted() const { return admitted_; }

 private:
  std::atomic<unsigned>& counter_;
  bool admitted_ = false;
};

}  // namespace

MHD_Result HttpServer::Impl::on_request(void* cls, MHD_Connection* connection, const char* url,
                                        const char* method, const char*, const char*, std::size_t*,
                                        void** request_state) {
  // A request without a body is answered on the second call, once libmicrohttpd has it all,
  // so the connection stays open for the next (pipelined) request. A request with a body is
  // refused on the first call, before the body is read; libmicrohttpd then closes.
  static int seen_marker;
  if (*request_state == nullptr) {
    *request_state = &seen_marker;
    if (!has_body(connection)) return MHD_YES;
  }
  auto& s = *static_cast<Impl*>(cls);
  auto& counters = *s.options.counters;
  const auto config = s.web_config->current();
  const WebConfig& wc = config->config;

  Request request;
  request.method = method ? method : "";
  request.path = url ? url : "";
  QueryCollect query{&request.query};
  MHD_get_connection_values(connection, MHD_GET_ARGUMENT_KIND, &collect_query, &query);
  HeaderCollect headers{&request.headers};
  MHD_get_connection_values_n(connection, MHD_HEADER_KIND, &collect_header, &headers);

  GuardInput in;
  in.method = request.method;
  in.path = request.path;
  in.uri_bytes = request.path.size() + query.bytes;
  in.has_body = has_body(connection);
  in.has_nul = headers.nul;
  in.has_range = request.headers.count("range") > 0;
  if (auto refusal = guard_request(in, s.options.max_uri_bytes)) {
    HeaderList extra;
    if (refusal->status == 405) extra.emplace_back("Allow", "GET, HEAD");
    return refuse(connection, counters, wc, refusal->status, refusal->reason,
                  std::move(refusal->body), std::move(extra));
  }

  InFlight in_flight(s.in_flight, s.options.max_in_flight);
  if (!in_flight.admitted()) {
    return refuse(connection, counters, wc, 503, RejectReason::kBusy,
                  "Limit of concurrent requests reached\n");
  }
  if (s.tls && s.tls->require_client_cert && !client_cert_verified(connection)) {
    return refuse(connection, counters, wc, 403, RejectReason::kClientCert,
                  "a verified client certificate is required\n");
  }
  if (config->auth->enabled()) {
    auto user = config->auth->check(request.header("authorization"));
    if (!user) {
      return refuse(connection, counters, wc, 401, RejectReason::kUnauthorized, "Unauthorized\n",
                    {{"WWW-Authenticate", "Basic realm=\"gpumon\""}});
    }
    request.user = std::move(*user);
  }
  request.headers.erase("authorization");
  if (!path_allowed(request.path, s.options.paths)) {
    return refuse(connection, counters, wc, 404, RejectReason::kNotFound, "Not Found\n");
  }
  request.remote_address = remote_address(connection);

  Response response;
  try {
    response = s.handler(request);
  } catch (...) {
    response = Response::text(500, "internal error\n");
  }
  compress_if_asked(request, response);
  return send(connection, counters, wc, response);
}

}  // namespace gpumon
