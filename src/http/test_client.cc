// SPDX-License-Identifier: MIT
#include "http/test_client.h"

#include <arpa/inet.h>
#include <crypt.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "util/ascii_lower.h"

namespace gpumon::testing {

int connect_loopback(std::uint16_t port, const char* source) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (source) {
    sockaddr_in from{};
    from.sin_family = AF_INET;
    inet_pton(AF_INET, source, &from.sin_addr);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof from) != 0) {
      ::close(fd);
      return -1;
    }
  }
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(port);
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

namespace {

// Sends `request` and reads into `reply` until the server closes (true) or `timeout` passes.
bool send_and_read(std::uint16_t port, const std::string& request,
                   std::chrono::milliseconds timeout, const char* source, std::string& reply) {
  const int fd = connect_loopback(port, source);
  if (fd < 0) return false;
  std::size_t sent = 0;
  while (sent < request.size()) {
    const auto n = ::send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;  // the server may close early on a refused request
    sent += static_cast<std::size_t>(n);
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  char buffer[16384];
  bool closed = false;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
    const auto n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) {
      closed = true;  // end of stream, or reset
      break;
    }
    reply.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return closed;
}

}  // namespace

std::string exchange(std::uint16_t port, const std::string& request,
                     std::chrono::milliseconds timeout, const char* source) {
  std::string reply;
  send_and_read(port, request, timeout, source, reply);
  return reply;
}

bool closed_by_server(std::uint16_t port, const std::string& request, std::string* reply,
                      const char* source) {
  std::string got;
  const bool closed = send_and_read(port, request, kReplyTimeout, source, got);
  if (reply) *reply = got;
  return closed;
}

Reply parse_reply(const std::string& raw) {
  Reply reply;
  reply.raw = raw;
  const auto end = raw.find("\r\n\r\n");
  if (raw.rfind("HTTP/1.", 0) != 0 || end == std::string::npos) return reply;
  reply.status = std::atoi(raw.c_str() + 9);
  std::istringstream lines(raw.substr(0, end));
  std::string line;
  std::getline(lines, line);
  while (std::getline(lines, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string name = util::ascii_lower(std::string_view(line).substr(0, colon));
    reply.headers[name] = line.substr(line.find_first_not_of(' ', colon + 1));
  }
  reply.body = raw.substr(end + 4);
  if (auto it = reply.headers.find("content-length"); it != reply.headers.end()) {
    const auto length = std::stoul(it->second);
    if (reply.body.size() > length) reply.body.resize(length);
  }
  return reply;
}

Reply request(std::uint16_t port, const std::string& target, const std::string& extra,
              const std::string& method, const char* source) {
  return parse_reply(exchange(port,
                              method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" +
                                  "Connection: close\r\n" + extra + "\r\n",
                              kReplyTimeout, source));
}

std::string tls_exchange(std::uint16_t port, const std::string& request, const TlsClient& client,
                         std::string& error) {
  const int fd = connect_loopback(port);
  if (fd < 0) {
    error = "connect failed";
    return "";
  }
  gnutls_certificate_credentials_t creds = nullptr;
  gnutls_certificate_allocate_credentials(&creds);
  if (!client.cert_file.empty()) {
    gnutls_certificate_set_x509_key_file(creds, client.cert_file.c_str(), client.key_file.c_str(),
                                         GNUTLS_X509_FMT_PEM);
  }
  gnutls_session_t session = nullptr;
  gnutls_init(&session, GNUTLS_CLIENT | GNUTLS_NO_SIGNAL);
  gnutls_priority_set_direct(session, client.priorities.c_str(), nullptr);
  gnutls_credentials_set(session, GNUTLS_CRD_CERTIFICATE, creds);
  gnutls_transport_set_int(session, fd);
  gnutls_handshake_set_timeout(session, static_cast<unsigned>(kReplyTimeout.count()));
  int rc;
  do {
    rc = gnutls_handshake(session);
  } while (rc < 0 && !gnutls_error_is_fatal(rc));
  std::string reply;
  if (rc < 0) {
    error = gnutls_strerror(rc);
  } else {
    unsigned count = 0;
    const gnutls_datum_t* peers = gnutls_certificate_get_peers(session, &count);
    if (client.peer_subject && peers && count > 0) {
      gnutls_x509_crt_t crt = nullptr;
      gnutls_x509_crt_init(&crt);
      char dn[512];
      std::size_t dn_size = sizeof dn;
      if (gnutls_x509_crt_import(crt, &peers[0], GNUTLS_X509_FMT_DER) == 0 &&
          gnutls_x509_crt_get_dn(crt, dn, &dn_size) == 0) {
        *client.peer_subject = dn;
      }
      gnutls_x509_crt_deinit(crt);
    }
    gnutls_record_send(session, request.data(), request.size());
    char buffer[16384];
    for (;;) {
      pollfd p{fd, POLLIN, 0};
      if (gnutls_record_check_pending(session) == 0 &&
          ::poll(&p, 1, static_cast<int>(kReplyTimeout.count())) <= 0) {
        break;
      }
      const auto n = gnutls_record_recv(session, buffer, sizeof buffer);
      if (n == GNUTLS_E_AGAIN || n == GNUTLS_E_INTERRUPTED) continue;
      if (n <= 0) break;
      reply.append(buffer, static_cast<std::size_t>(n));
      if (client.stop_after_bytes && reply.size() >= client.stop_after_bytes) break;
    }
  }
  gnutls_deinit(session);
  gnutls_certificate_free_credentials(creds);
  ::close(fd);
  return reply;
}

std::string bcrypt_hash(const std::string& password, int cost) {
  char setting[CRYPT_GENSALT_OUTPUT_SIZE];
  crypt_gensalt_rn("$2b$", static_cast<unsigned long>(cost), nullptr, 0, setting, sizeof setting);
  crypt_data data{};
  return crypt_rn(password.c_str(), setting, &data, sizeof data);
}

std::string basic_authorization(const std::string& user_colon_password) {
  static const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  const auto& in = user_colon_password;
  for (std::size_t i = 0; i < in.size(); i += 3) {
    unsigned n = static_cast<unsigned char>(in[i]) << 16;
    if (i + 1 < in.size()) n |= static_cast<unsigned char>(in[i + 1]) << 8;
    if (i + 2 < in.size()) n |= static_cast<unsigned char>(in[i + 2]);
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += i + 1 < in.size() ? kAlphabet[(n >> 6) & 63] : '=';
    out += i + 2 < in.size() ? kAlphabet[n & 63] : '=';
  }
  return "Basic " + out;
}

const TestCerts& test_certs() {
  static const TestCerts certs = [] {
    TestCerts c;
    c.dir = temp_dir();
    const std::string d = c.dir + "/";
    const std::string ec = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes ";
    const std::string script =
        "cd " + d + " && " + "openssl req -x509 " + ec +
        "-keyout ca.key -out ca.pem -days 2 -subj /CN=gpumon-test-ca && " + "openssl req " + ec +
        "-keyout server.key -out server.csr -subj /CN=127.0.0.1 && " +
        "printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\\n' > san.ext && " +
        "openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial "
        "-out server.pem -days 2 -extfile san.ext && " +
        "openssl req " + ec + "-keyout client.key -out client.csr -subj /CN=client && " +
        "openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial "
        "-out client.pem -days 2 && " +
        "openssl req -x509 " + ec + "-keyout rogue.key -out rogue.pem -days 2 -subj /CN=rogue && " +
        "openssl req -x509 " + ec + "-keyout other.key -out other.pem -days 2 -subj /CN=rotated";
    c.ok = std::system(("(" + script + ") >/dev/null 2>&1").c_str()) == 0;
    c.ca = d + "ca.pem";
    c.server_cert = d + "server.pem";
    c.server_key = d + "server.key";
    c.client_cert = d + "client.pem";
    c.client_key = d + "client.key";
    c.rogue_cert = d + "rogue.pem";
    c.rogue_key = d + "rogue.key";
    c.other_cert = d + "other.pem";
    c.other_key = d + "other.key";
    return c;
  }();
  return certs;
}

std::size_t resident_bytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoul(line.substr(6)) * 1024;
  }
  return 0;
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

std::string temp_dir() {
  char pattern[] = "/tmp/gpumon-http-test-XXXXXX";
  const char* dir = ::mkdtemp(pattern);
  return dir ? dir : "/tmp";
}

}  // namespace gpumon::testing
