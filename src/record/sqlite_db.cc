// SPDX-License-Identifier: MIT
#include "record/sqlite_db.h"

#include <string>
#include <utility>

namespace gpumon::record::detail {

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
  if (rc != SQLITE_OK) error = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
  return rc;
}

int Db::exec(std::string_view sql) {
  const std::string s(sql);
  return sqlite3_exec(db_, s.c_str(), nullptr, nullptr, nullptr);
}

}  // namespace gpumon::record::detail
