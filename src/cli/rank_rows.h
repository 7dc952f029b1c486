// SPDX-License-Identifier: MIT
// The attached training ranks of a snapshot (Snapshot::ranks): the table the node publishes
// beside its agent socket (node/rank_memory_file.h), each process placed on its GPU by the one
// rank -> GPU mapping (training/rank_device.h). A view: an absent, unreadable or foreign file
// gives no rows, never an error.
//
// Thread-safety: plain functions.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "cli/snapshot.h"
#include "training/rank_memory.h"

namespace gpumon::cli {

/// The table's file for the agent training processes use: GPUMON_AGENT_SOCKET's (`env_socket`,
/// as `gpumon record -- CMD` sets it) when set, else the default socket's.
std::string rank_memory_file(const std::optional<std::string>& env_socket);

/// Sets snap.ranks from `table` (snap.gpus and snap.processes filled first): the processes
/// `alive` says still run, each on its GPU, aged against `now_ms` (wall clock, as the table).
void set_ranks(Snapshot& snap, const training::RankMemoryTable& table, std::int64_t now_ms,
               const std::function<bool(std::int64_t pid)>& alive);

/// Reads the table at `path` and sets snap.ranks (above), the processes alive on this host.
void add_ranks(Snapshot& snap, const std::string& path,
               std::chrono::system_clock::time_point now = std::chrono::system_clock::now());

}  // namespace gpumon::cli
