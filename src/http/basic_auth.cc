// SPDX-License-Identifier: MIT
#include "http/basic_auth.h"

#include <crypt.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>

#include <algorithm>
#include <cstring>
#include <memory>

namespace gpumon {
namespace detail {

std::optional<std::string> base64_decode(std::string_view text) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  if (text.size() % 4 != 0) return std::nullopt;
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (std::size_t i = 0; i < text.size(); i += 4) {
    int v[4];
    int pad = 0;
    for (int j = 0; j < 4; ++j) {
      const char c = text[i + j];
      if (c == '=' && i + 4 == text.size() && j >= 2) {
        v[j] = 0;
        ++pad;
        continue;
      }
      if (pad > 0) return std::nullopt;  // data after '='
      v[j] = value(c);
      if (v[j] < 0) return std::nullopt;
    }
    const unsigned n =
        (unsigned(v[0]) << 18) | (unsigned(v[1]) << 12) | (unsigned(v[2]) << 6) | unsigned(v[3]);
    out.push_back(static_cast<char>(n >> 16));
    if (pad < 2) out.push_back(static_cast<char>((n >> 8) & 0xff));
    if (pad < 1) out.push_back(static_cast<char>(n & 0xff));
  }
  return out;
}

}  // namespace detail

namespace {

bool equal_constant_time(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

void append_field(std::string& out, std::string_view field) {
  out += std::to_string(field.size());
  out += ':';
  out += field;
}

std::string cache_key(const std::string& user, const std::string& hash,
                      const std::string& password) {
  std::string key;
  append_field(key, user);
  append_field(key, hash);
  append_field(key, password);
  unsigned char digest[32];
  gnutls_hash_fast(GNUTLS_DIG_SHA256, key.data(), key.size(), digest);
  std::fill(key.begin(), key.end(), '\0');
  return std::string(reinterpret_cast<char*>(digest), sizeof digest);
}

}  // namespace

BasicAuth::BasicAuth(std::map<std::string, std::string> users, std::size_t cache_size)
    : users_(std::move(users)), cache_size_(cache_size) {
  // The fake hash has the highest cost among the users, so a miss costs what a hit does.
  unsigned long cost = 4;
  for (const auto& [user, hash] : users_) cost = std::max(cost, std::stoul(hash.substr(4, 2)));
  static const char kFixedSalt[16] = {'g', 'p', 'u', 'm', 'o', 'n', '-', 'f',
                                      'a', 'k', 'e', '-', 's', 'a', 'l', 't'};
  char setting[CRYPT_GENSALT_OUTPUT_SIZE];
  if (crypt_gensalt_rn("$2b$", cost, kFixedSalt, sizeof kFixedSalt, setting, sizeof setting)) {
    fake_hash_ = setting;
  }
}

bool BasicAuth::verify(const std::string& password, const std::string& hash) const {
  auto data = std::make_unique<crypt_data>();
  const char* out = crypt_rn(password.c_str(), hash.c_str(), data.get(), sizeof(crypt_data));
  const bool ok = out != nullptr && out[0] != '*' && equal_constant_time(out, hash);
  explicit_bzero(data.get(), sizeof(crypt_data));
  return ok;
}

std::optional<std::string> BasicAuth::check(std::string_view authorization) {
  constexpr std::string_view kScheme = "basic ";
  if (authorization.size() <= kScheme.size()) return std::nullopt;
  for (std::size_t i = 0; i < kScheme.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(authorization[i])) != kScheme[i]) {
      return std::nullopt;
    }
  }
  auto encoded = authorization.substr(kScheme.size());
  while (!encoded.empty() && encoded.front() == ' ') encoded.remove_prefix(1);
  while (!encoded.empty() && encoded.back() == ' ') encoded.remove_suffix(1);
  auto decoded = detail::base64_decode(encoded);
  if (!decoded) return std::nullopt;
  const auto colon = decoded->find(':');
  if (colon == std::string::npos) return std::nullopt;
  std::string user = decoded->substr(0, colon);
  std::string password = decoded->substr(colon + 1);
  std::fill(decoded->begin(), decoded->end(), '\0');
  // crypt_rn takes a C string: a NUL would cut the password short.
  if (password.find('\0') != std::string::npos) return std::nullopt;

  const auto it = users_.find(user);
  const bool known = it != users_.end();
  const std::string& hash = known ? it->second : fake_hash_;
  const std::string key = cache_key(user, hash, password);
  {
    std::lock_guard lock(mutex_);
    if (known && cache_.count(key)) return user;
    ++bcrypt_runs_;
  }
  const bool ok = verify(password, hash) && known;
  std::fill(password.begin(), password.end(), '\0');
  if (!ok) return std::nullopt;
  std::lock_guard lock(mutex_);
  if (cache_.insert(key).second) {
    cache_order_.push_back(key);
    if (cache_order_.size() > cache_size_) {
      cache_.erase(cache_order_.front());
      cache_order_.pop_front();
    }
  }
  return user;
}

std::size_t BasicAuth::bcrypt_runs() const {
  std::lock_guard lock(mutex_);
  return bcrypt_runs_;
}

}  // namespace gpumon
