// SPDX-License-Identifier: MIT
#include "record/sqlite_db.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

namespace gpumon::record::detail {

std::string open_failure_cause(const std::string& path, bool write) {
  const auto slash = path.rfind('/');
  const std::string folder = slash == std::string::npos ? "."
                             : slash == 0               ? "/"
                                                        : path.substr(0, slash);
  const auto because = [](const std::string& what, int err) {
    if (err == EROFS) return what + " is on a read-only file system";
    if (err == EACCES || err == EPERM) return "no permission for " + what;
    if (err == ENOENT) return what + " does not exist";
    if (err == ENOTDIR) return what + ": a part of its path is not a folder";
    return what + ": " + std::strerror(err);
  };
  struct stat st {};
  if (::stat(folder.c_str(), &st) != 0) return because("the folder " + folder, errno);
  if (!S_ISDIR(st.st_mode)) return folder + " is not a folder";
  if (::access(folder.c_str(), X_OK) != 0) return because("the folder " + folder, errno);
  const bool exists = ::stat(path.c_str(), &st) == 0;
  // Writing a recording creates the file, and its -wal and -shm beside it: the folder must be
  // writable even when the file exists.
  if (write && ::access(folder.c_str(), W_OK) != 0)
    return because("writing in the folder " + folder, errno);
  if (exists && ::access(path.c_str(), write ? R_OK | W_OK : R_OK) != 0)
    return because(std::string(write ? "writing " : "reading ") + path, errno);
  return {};
}

Stmt::Stmt(sqlite3* db, std::string_view sql) {
  if (sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &s_, nullptr) != SQLITE_OK) {
    sqlite3_finalize(s_);
    s_ = nullptr;
  }
}

Stmt& Stmt::operator=(Stmt&& o) noexcept {
  std::swap(s_, o.s_);
  return *this;
}

Stmt& Stmt::bind(int i, std::int64_t v) {
  sqlite3_bind_int64(s_, i, v);
  return *this;
}

Stmt& Stmt::bind(int i, std::string_view v) {
  sqlite3_bind_text(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  return *this;
}

Stmt& Stmt::bind(int i, std::span<const std::uint8_t> v) {
  sqlite3_bind_blob(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  return *this;
}

Stmt& Stmt::bind_double(int i, double v) {
  sqlite3_bind_double(s_, i, v);
  return *this;
}

Stmt& Stmt::bind_null(int i) {
  sqlite3_bind_null(s_, i);
  return *this;
}

int Stmt::step() {
  return s_ ? sqlite3_step(s_) : SQLITE_MISUSE;
}

void Stmt::reset() {
  sqlite3_reset(s_);
  sqlite3_clear_bindings(s_);
}

std::string Stmt::text(int col) const {
  const auto* p = sqlite3_column_text(s_, col);
  return p ? std::string(reinterpret_cast<const char*>(p),
                         static_cast<std::size_t>(sqlite3_column_bytes(s_, col)))
           : std::string();
}

std::span<const std::uint8_t> Stmt::blob(int col) const {
  const auto* p = static_cast<const std::uint8_t*>(sqlite3_column_blob(s_, col));
  const int n = sqlite3_column_bytes(s_, col);
  if (!p || n <= 0) return {};
  return {p, static_cast<std::size_t>(n)};
}

Db& Db::operator=(Db&& o) noexcept {
  std::swap(db_, o.db_);
  return *this;
}

int Db::open(const std::string& path, int flags, std::string& error) {
  sqlite3_close(db_);
  db_ = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &db_, flags, nullptr);
  if (rc != SQLITE_OK) {
    error = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    const bool write = (flags & SQLITE_OPEN_READWRITE) != 0;
    if (const std::string cause = open_failure_cause(path, write); !cause.empty())
      error += " (" + cause + ")";
  }
  return rc;
}

int Db::exec(std::string_view sql) {
  const std::string s(sql);
  return sqlite3_exec(db_, s.c_str(), nullptr, nullptr, nullptr);
}

}  // namespace gpumon::record::detail
