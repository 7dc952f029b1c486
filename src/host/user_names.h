// SPDX-License-Identifier: MIT
// UserNames: uid -> user name, cached. getpwuid_r may go to LDAP or SSSD and take
// milliseconds, so each uid is looked up once per UserNames object.
//
// Thread-safety: none; one thread uses an instance.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <unordered_map>

namespace gpumon::host {

class UserNames {
 public:
  /// Returns the name of `uid`, or nullopt when the user database has no entry for it.
  using Lookup = std::function<std::optional<std::string>(unsigned uid)>;

  /// `lookup` defaults to the system's user database (getpwuid_r).
  explicit UserNames(Lookup lookup = system_lookup);

  /// The user's name, made printable (clean_text); the number itself when there is no entry
  /// (a uid from a container's own /etc/passwd, for instance).
  const std::string& name_of(unsigned uid);

  static std::optional<std::string> system_lookup(unsigned uid);

 private:
  Lookup lookup_;
  std::unordered_map<unsigned, std::string> cache_;
};

}  // namespace gpumon::host
