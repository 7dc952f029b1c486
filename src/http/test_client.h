// SPDX-License-Identifier: MIT
// Test helpers: a raw-socket HTTP client (it sends exactly the bytes a test gives, hostile or
// not), a GnuTLS client, bcrypt hashes and test certificates made at test time.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>

namespace gpumon::testing {

using namespace std::chrono_literals;

/// A connected TCP socket to 127.0.0.1:port (from `source`, another loopback address, when
/// given), or -1.
int connect_loopback(std::uint16_t port, const char* source = nullptr);

/// How long the helpers below wait for a server's reply: long enough that only a server that
/// never answers (a hung test) reaches it, never a slow one on a loaded machine.
inline constexpr std::chrono::milliseconds kReplyTimeout = 60s;

/// Sends `request`, then reads until the server closes or `timeout` passes. A short timeout
/// checks that nothing comes (that can only pass falsely on a slow machine, never fail).
std::string exchange(std::uint16_t port, const std::string& request,
                     std::chrono::milliseconds timeout = kReplyTimeout,
                     const char* source = nullptr);

/// Sends `request`; true when the server closes the connection (within kReplyTimeout), with
/// what it sent meanwhile in `reply`.
bool closed_by_server(std::uint16_t port, const std::string& request, std::string* reply,
                      const char* source = nullptr);

struct Reply {
  int status = 0;                              // 0: no parsable status line
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;
  std::string raw;
};

/// Parses the first response in `raw`.
Reply parse_reply(const std::string& raw);

/// GET (or `method`) `target` with Connection: close and `extra` header lines ("Name: v\r\n").
Reply request(std::uint16_t port, const std::string& target, const std::string& extra = "",
              const std::string& method = "GET", const char* source = nullptr);

struct TlsClient {
  std::string priorities = "NORMAL";
  std::string cert_file;  // client certificate and key, optional
  std::string key_file;
  std::size_t stop_after_bytes = 0;     // close once this much arrived (0: read to the end)
  std::string* peer_subject = nullptr;  // receives the server certificate's subject DN
};

/// Sends `request` over TLS and reads the reply; "" with `error` set when the handshake failed.
std::string tls_exchange(std::uint16_t port, const std::string& request, const TlsClient& client,
                         std::string& error);

/// A bcrypt hash of `password` ($2b$, cost `cost`).
std::string bcrypt_hash(const std::string& password, int cost = 5);

/// "Basic base64(user:password)".
std::string basic_authorization(const std::string& user_colon_password);

/// Certificates made with openssl in a fresh temporary folder: a CA, a server certificate for
/// 127.0.0.1 signed by it, a client certificate signed by it and one self-signed client
/// certificate. ok is false (and the test skips) where openssl is missing.
struct TestCerts {
  bool ok = false;
  std::string dir, ca, server_cert, server_key, client_cert, client_key, rogue_cert, rogue_key;
  std::string other_cert, other_key;  // a second server certificate, CN=rotated
};
const TestCerts& test_certs();

/// The resident set size of this process, in bytes.
std::size_t resident_bytes();

/// Writes `text` to `path`.
void write_file(const std::string& path, const std::string& text);

/// A fresh temporary folder.
std::string temp_dir();

}  // namespace gpumon::testing
