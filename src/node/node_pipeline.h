// SPDX-License-Identifier: MIT
// NodePipeline: what runs on a node for `gpumon serve`, `gpumon agent` and `gpumon record`, in
// one place. It owns, and starts and stops in the one safe order:
//
//   NVML backend -> Sampler ---------> sample sinks: RecordingWriter, LiveDiagnoser, + the
//                                      command's own (the exporter's state)
//   agent socket -> StepFanout ------> step sinks: the same writer and diagnoser, + the
//                                      command's own (the exporter's training state)
//   LiveDiagnoser -> findings logged, and pushed back to the training processes
//   the ranks' allocator memory -> <socket>.ranks.json, for `gpumon` and `gpumon watch`
//
// The static details (names, UUIDs, bus ids, max clocks) are read once, before the sampler
// starts; the recording and the diagnoser take them from it. A command chooses its parts with
// NodeOptions and adds its own sinks between open() and start(); it keeps its own loop (a
// child to wait for, an HTTP server) and calls stop() when done.
//
// Thread-safety: open/add_*/start/poll/stop from the command's thread; the parts run their
// own threads as their headers say.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "agent/agent_server.h"
#include "diagnose/live/live_diagnoser.h"
#include "gpu/nvml_backend.h"
#include "node/node_log.h"
#include "node/process_watcher.h"
#include "node/rank_memory_file.h"
#include "node/step_fanout.h"
#include "sampler/sampler.h"

namespace gpumon::node {

struct NodeOptions {
  std::string name;  ///< "serve", "agent", "record": messages start "gpumon NAME: "
  /// Opens NVML; nullptr when it cannot (having said why). Not called when `sample` is false.
  std::function<std::unique_ptr<NvmlBackend>()> open_backend;
  bool sample = true;         ///< open the GPUs and run a sampler
  bool gpus_required = true;  ///< false: carry on with the training steps alone
  SamplerConfig sampler;
  std::string record_path;        ///< non-empty: record into it
  bool record_overwrite = false;  ///< replace an existing file there (--force)
  std::string record_command;
  std::string version;  ///< gpumon's, for the recording
  bool diagnose = true;
  diagnose::LiveDiagnoserOptions diagnose_options;
  std::string agent_socket;  ///< non-empty: listen there for training processes
  /// true: no socket, no pipeline (the agent command). false: warn and go on (serve, record).
  bool agent_socket_required = false;
  /// Listen before opening NVML, which can take a while on a busy node (the ranks that start
  /// an agent give it 5 s to listen).
  bool agent_socket_first = false;
  LogFormat log_format = LogFormat::kText;  ///< --log-format: how log() writes (node_log.h)
  /// Sample the connected training processes' CPU time and memory (and their workers', and
  /// the host's free memory) once a second for the step sinks (process_watcher.h).
  bool watch_processes = true;
};

struct RecordingCounts {
  std::uint64_t ticks = 0, steps = 0;
  std::uint64_t dropped = 0;  ///< items not recorded: queue full, or after a stop
  bool stopped = false;       ///< a write failed (`error` says why); nothing more is recorded
  std::string error;
};

class NodePipeline {
 public:
  /// Opens the parts `options` asks for; nullptr (having written why to `log`) when a required
  /// one cannot be had. `exit_code` is then what the command should exit with.
  static std::unique_ptr<NodePipeline> open(NodeOptions options, std::ostream& log, int& exit_code);
  ~NodePipeline();  ///< stops
  NodePipeline(const NodePipeline&) = delete;
  NodePipeline& operator=(const NodePipeline&) = delete;

  /// Before start(): more consumers of the samples (needs a sampler) and of the steps.
  void add_sample_sink(std::shared_ptr<SampleSink> sink);
  void add_step_sink(std::shared_ptr<training::StepSink> sink);

  /// Starts the live diagnoses (logging and pushing their findings), the sampler, and the
  /// agent socket if not open yet (a failure to listen is a warning here).
  void start();
  /// Call every few hundred ms from the command's loop: says once when the recording stopped
  /// (disk full...), and once when a GPU turns stale (an NVML call on it has not returned:
  /// which, for how long) and when it answers again.
  void poll();
  /// Live diagnoses, agent socket (no step after it), sampler, then the recording is closed.
  /// Idempotent.
  void stop();

  Sampler* sampler() { return sampler_.get(); }  ///< null without GPUs
  agent::AgentServer* agent() { return agent_.get(); }
  std::shared_ptr<diagnose::LiveDiagnoser> live() { return live_; }
  const std::string& agent_socket() const { return options_.agent_socket; }
  std::string simulated_scenario() const;
  bool recording() const;
  /// What the recording holds so far; zeros without one. Thread-safe (serve's HTTP workers
  /// read it for /health and /metrics).
  RecordingCounts recording_counts() const;
  /// "1234 ticks, 56 steps, 7 items dropped (why it stopped)" for a closing line; "" without.
  std::string recording_summary() const;
  /// Recorded with the end time when the recording closes (stop()); nothing without one.
  void set_recording_end_meta(std::string key, std::string value);
  /// Whether poll() has said that the recording stopped.
  bool reported_record_stop() const { return reported_record_stop_; }
  /// "56 steps from 3 client(s), 1 dropped"; "" without a socket.
  std::string agent_summary() const;
  /// Where the command writes its own lifecycle lines, in the format asked for.
  const NodeLog& log() const { return log_; }

 private:
  NodePipeline(NodeOptions options, std::ostream& log);
  bool open_socket(bool required);
  void say(std::string_view event, const std::string& line,
           NodeLog::Level level = NodeLog::Level::kInfo) const {
    log_.say(event, line, level);
  }

  NodeOptions options_;
  NodeLog log_;
  std::shared_ptr<StepFanout> steps_ = std::make_shared<StepFanout>();
  std::unique_ptr<Sampler> sampler_;
  std::shared_ptr<diagnose::LiveDiagnoser> live_;
  std::unique_ptr<agent::AgentServer> agent_;
  std::shared_ptr<ProcessWatcher> watcher_;      // with a socket and watch_processes
  std::shared_ptr<RankMemoryFile> rank_memory_;  // with a socket: for `gpumon` and `watch`
  struct Recording;  // the writer, where this build has the recording (SQLite, zstd)
  std::unique_ptr<Recording> recording_;
  bool started_ = false;
  bool stopped_ = false;
  bool reported_record_stop_ = false;
  std::vector<StaleGpu> reported_stale_;  // GPUs said stale by poll(), until they answer
};

}  // namespace gpumon::node
