// SPDX-License-Identifier: MIT
// HTTP basic auth against bcrypt hashes (exporter-toolkit's basic_auth_users).
//
// - bcrypt runs through libcrypt's crypt_rn, the result is compared in constant time;
// - an unknown user is checked against a fake hash of the same cost, so the time taken does
//   not tell which user names exist;
// - successful checks are cached (bcrypt costs tens of milliseconds) under a SHA-256 of the
//   length-prefixed (user, hash, password) triple: no two different triples share a key, the
//   ambiguity behind CVE-2022-46146, and no password is kept in memory.
//
// Thread-safety: check() may run on several threads at once.
#pragma once

#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>

namespace gpumon {

class BasicAuth {
 public:
  /// `users`: user -> bcrypt hash, already checked with is_bcrypt_hash().
  explicit BasicAuth(std::map<std::string, std::string> users, std::size_t cache_size = 256);

  bool enabled() const { return !users_.empty(); }

  /// The user when `authorization` (the header's value) holds a known user and the right
  /// password, otherwise nullopt. A malformed header is a failure, never an exception.
  std::optional<std::string> check(std::string_view authorization);

  /// How many checks ran bcrypt (for tests of the cache).
  std::size_t bcrypt_runs() const;

 private:
  bool verify(const std::string& password, const std::string& hash) const;

  std::map<std::string, std::string> users_;
  std::string fake_hash_;
  std::size_t cache_size_;
  mutable std::mutex mutex_;
  std::set<std::string> cache_;
  std::deque<std::string> cache_order_;
  std::size_t bcrypt_runs_ = 0;
};

namespace detail {
/// Strict base64 (RFC 4648 with padding); nullopt when malformed.
std::optional<std::string> base64_decode(std::string_view text);
}  // namespace detail

}  // namespace gpumon
