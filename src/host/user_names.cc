// SPDX-License-Identifier: MIT
#include "host/user_names.h"

#include <pwd.h>
#include <unistd.h>

#include <cerrno>
#include <utility>
#include <vector>

#include "host/text_clean.h"

namespace gpumon::host {

UserNames::UserNames(Lookup lookup) : lookup_(std::move(lookup)) {}

const std::string& UserNames::name_of(unsigned uid) {
  if (auto it = cache_.find(uid); it != cache_.end()) return it->second;
  std::optional<std::string> name = lookup_ ? lookup_(uid) : std::nullopt;
  std::string shown = name && !name->empty() ? clean_text(*name) : std::to_string(uid);
  return cache_.emplace(uid, std::move(shown)).first->second;
}

std::optional<std::string> UserNames::system_lookup(unsigned uid) {
  long hint = ::sysconf(_SC_GETPW_R_SIZE_MAX);
  std::size_t size = hint > 0 ? static_cast<std::size_t>(hint) : 1024;
  // Grow on ERANGE (large group or gecos fields), up to 1 MiB.
  while (size <= (1U << 20)) {
    std::vector<char> buf(size);
    passwd pw{};
    passwd* result = nullptr;
    const int rc = ::getpwuid_r(static_cast<uid_t>(uid), &pw, buf.data(), buf.size(), &result);
    if (rc == ERANGE) {
      size *= 2;
      continue;
    }
    if (rc != 0 || result == nullptr || pw.pw_name == nullptr) return std::nullopt;
    return std::string(pw.pw_name);
  }
  return std::nullopt;
}

}  // namespace gpumon::host
