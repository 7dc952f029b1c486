// SPDX-License-Identifier: MIT
// Schema v4 of a gpumon recording (docs/recording.md is the reference for users).
#pragma once

#include <string>

#include "record/sqlite_db.h"

namespace gpumon::record {

/// 2 added the `steps` and `rank_events` tables, 3 `process_samples`, 4 let `steps.data_wait_s`
/// be NULL (not measured); files of versions 1 to 3 are still read.
inline constexpr int kSchemaVersion = 5;
/// meta('format') of every recording: tells a gpumon recording from any other SQLite file.
inline constexpr const char* kFormatName = "gpumon-recording";

namespace detail {

/// Creates every table of a new recording, fills `metrics` from the catalog and sets
/// user_version; SQLITE_OK or the error code.
int create_schema(Db& db);

/// A message for the user about SQLite error `rc` on `db` (corrupt, not a database, locked).
std::string describe_error(Db& db, int rc);

/// Empty when `db` is a recording this build can read; else a message for the user.
std::string check_schema(Db& db);

}  // namespace detail
}  // namespace gpumon::record
