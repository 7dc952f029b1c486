// SPDX-License-Identifier: MIT
// Thin RAII over the SQLite C API: a connection and prepared statements, with errors returned as
// codes (never thrown). Thread-safety: one connection per thread, as SQLite's default build wants.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gpumon::record::detail {

/// Why `path` cannot be opened (for writing too, with `write`), from the file system: its folder
/// is missing, not searchable or not writable, it is on a read-only file system, or the file is
/// not readable or writable. Empty when none of these explains it. SQLite says only "unable to
/// open database file".
std::string open_failure_cause(const std::string& path, bool write);

class Stmt {
 public:
  Stmt() = default;
  Stmt(sqlite3* db, std::string_view sql);  ///< ok() tells whether it prepared
  Stmt(Stmt&& o) noexcept : s_(o.s_) { o.s_ = nullptr; }
  Stmt& operator=(Stmt&& o) noexcept;
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  ~Stmt() { sqlite3_finalize(s_); }

  bool ok() const { return s_ != nullptr; }
  Stmt& bind(int i, std::int64_t v);
  Stmt& bind(int i, std::string_view v);
  Stmt& bind(int i, std::span<const std::uint8_t> v);
  Stmt& bind_null(int i);
  Stmt& bind_double(int i, double v);
  template <typename T>
  Stmt& bind(int i, const std::optional<T>& v) {
    return v ? bind(i, *v) : bind_null(i);
  }
  /// SQLITE_ROW, SQLITE_DONE or an error code.
  int step();
  void reset();

  bool is_null(int col) const { return sqlite3_column_type(s_, col) == SQLITE_NULL; }
  std::int64_t int64(int col) const { return sqlite3_column_int64(s_, col); }
  double real(int col) const { return sqlite3_column_double(s_, col); }
  std::string text(int col) const;
  std::span<const std::uint8_t> blob(int col) const;

 private:
  sqlite3_stmt* s_ = nullptr;
};

class Db {
 public:
  Db() = default;
  Db(Db&& o) noexcept : db_(o.db_) { o.db_ = nullptr; }
  Db& operator=(Db&& o) noexcept;
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;
  ~Db() { sqlite3_close(db_); }

  /// SQLITE_OK or the error code; `error` gets SQLite's message and, where the file system
  /// says, why (open_failure_cause()).
  int open(const std::string& path, int flags, std::string& error);
  sqlite3* get() const { return db_; }
  /// Runs one or more statements without results; SQLITE_OK or the error code.
  int exec(std::string_view sql);
  Stmt prepare(std::string_view sql) const { return Stmt(db_, sql); }
  std::string message() const { return db_ ? sqlite3_errmsg(db_) : "no database"; }
  std::int64_t last_insert_rowid() const { return sqlite3_last_insert_rowid(db_); }

 private:
  sqlite3* db_ = nullptr;
};

}  // namespace gpumon::record::detail
