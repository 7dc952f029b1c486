// SPDX-License-Identifier: MIT
// RankMemoryFile: a step sink that publishes the attached training processes' latest allocator
// memory (training/rank_memory.h) in a file beside the agent socket, `<socket>.ranks.json`,
// which `gpumon` and `gpumon watch` read to show PyTorch's allocated and reserved memory per GPU
// (cli/rank_rows.h). A file, not a question on the socket: a reader can never slow or block the
// agent, and the agent's thread spends one small write a second at most.
//
// The file is rewritten whole (a temporary file renamed over it: a reader sees the old table or
// the new one) at most once a second of the steps' arrival times, and at once when a process
// leaves; it is made 0600 in the socket's private folder, and removed by close() (an agent that
// died leaves it behind: readers judge it by its age). Write errors are kept quiet: the table
// is a view, and the next step tries again.
//
// Thread-safety: the StepSink calls come one at a time (the agent's thread); close() after them.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "training/rank_memory.h"
#include "training/training_types.h"

namespace gpumon::node {

/// `<socket>.ranks.json`: where the node publishes the table for the agent at `socket_path`.
std::string rank_memory_path(const std::string& socket_path);

class RankMemoryFile final : public training::StepSink {
 public:
  explicit RankMemoryFile(std::string path) : path_(std::move(path)) {}
  ~RankMemoryFile() override { close(); }

  void on_step(const training::Step& step) override;
  void on_rank_event(const training::RankEvent& event) override;
  /// Removes the file. Idempotent.
  void close();

  /// The table as the next write would publish it (tests).
  training::RankMemoryTable table(std::int64_t written_ms) const;

 private:
  void write(std::int64_t now_ms);

  std::string path_;
  std::map<std::int64_t, training::RankMemory> ranks_;  ///< by pid
  std::int64_t last_write_ms_ = -1;
  bool closed_ = false;
};

}  // namespace gpumon::node
