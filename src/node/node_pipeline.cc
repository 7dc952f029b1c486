// SPDX-License-Identifier: MIT
#include "node/node_pipeline.h"

#include <algorithm>
#include <cstdio>
#include <mutex>

#include "agent/socket_path.h"
#include "diagnose/live/live_findings.h"
#include "util/plural.h"

#ifdef GPUMON_HAVE_RECORD
#include "record/recording_writer.h"
#endif

namespace gpumon::node {

#ifdef GPUMON_HAVE_RECORD
struct NodePipeline::Recording {
  std::shared_ptr<record::RecordingWriter> writer;
};
#else
struct NodePipeline::Recording {};
#endif

NodePipeline::NodePipeline(NodeOptions options, std::ostream& log)
    : options_(std::move(options)), log_(log, options_.name, options_.log_format) {}

NodePipeline::~NodePipeline() {
  stop();
}

std::unique_ptr<NodePipeline> NodePipeline::open(NodeOptions options, std::ostream& log,
                                                 int& exit_code) {
  exit_code = 1;
  std::unique_ptr<NodePipeline> p(new NodePipeline(std::move(options), log));
  const NodeOptions& o = p->options_;
#ifndef GPUMON_HAVE_RECORD
  if (!o.record_path.empty()) {
    p->say("error",
           "recording is not part of this build (install libsqlite3-dev libzstd-dev and "
           "rebuild)");
    exit_code = 2;
    return nullptr;
  }
#endif
  if (o.diagnose) {
    p->live_ = std::make_shared<diagnose::LiveDiagnoser>(o.diagnose_options);
    p->steps_->add(p->live_);
  }
  // The step sinks of the socket itself, before it may open (agent_socket_first): a rank that
  // connects while NVML opens has its hello seen by each of them.
  if (!o.agent_socket.empty()) {
    p->rank_memory_ = std::make_shared<RankMemoryFile>(agent::rank_memory_path(o.agent_socket));
    p->steps_->add(p->rank_memory_);
  }
  if (o.watch_processes && !o.agent_socket.empty()) {
    // The process samples it sends go through the same fanout, after the hello it saw.
    p->watcher_ =
        std::make_shared<ProcessWatcher>(p->steps_, std::make_shared<host::DiskProcFiles>(),
                                         std::make_shared<host::DiskProcFiles>("/sys/fs/cgroup"));
    p->steps_->add(p->watcher_);
  }
  if (o.agent_socket_first && !o.agent_socket.empty() && !p->open_socket(o.agent_socket_required))
    return nullptr;

  if (o.sample) {
    std::unique_ptr<NvmlBackend> backend = o.open_backend ? o.open_backend() : nullptr;
    if (!backend && o.gpus_required) return nullptr;  // open_backend said why
    if (!backend) {
      p->say("no_gpus", "no GPU samples: diagnosing the training steps only",
             NodeLog::Level::kWarning);
    } else {
      // Read once: the sampler keeps them, and the recording and the diagnoser take them there.
      for (unsigned i = 0; i < backend->device_count(); ++i)
        backend->sample(i, MetricGroup::kStaticDetails);
      p->sampler_ = std::make_unique<Sampler>(std::move(backend), o.sampler);
    }
  }
  if (p->sampler_) {
    const std::vector<DeviceStatic> devices = p->sampler_->devices();
    if (p->live_) p->live_->set_devices(devices);
#ifdef GPUMON_HAVE_RECORD
    if (!o.record_path.empty()) {
      std::string error;
      auto writer = record::RecordingWriter::create(
          {.path = o.record_path, .overwrite = o.record_overwrite},
          record::make_run_info(p->sampler_->system(), o.version, o.record_command), devices,
          error);
      if (!writer) {
        p->say("error", error, NodeLog::Level::kError);
        return nullptr;
      }
      p->recording_ = std::make_unique<Recording>(Recording{std::move(writer)});
      p->sampler_->add_sink(p->recording_->writer);
      p->steps_->add(p->recording_->writer);
    }
#endif
    if (p->live_) p->sampler_->add_sink(p->live_);
    if (const std::string sim = p->simulated_scenario(); !sim.empty())
      p->say("simulated", "SIMULATED GPUs (scenario " + sim + ")");
  }
  const bool listening = p->agent_ != nullptr;
  if (!listening && o.agent_socket_required && !p->open_socket(true)) return nullptr;
  if (p->rank_memory_ && p->sampler_) {
    p->rank_memory_->set_devices(p->sampler_->devices());
    p->sampler_->add_sink(p->rank_memory_);
  }
  exit_code = 0;
  return p;
}

bool NodePipeline::open_socket(bool required) {
  const std::string& path = options_.agent_socket;
  std::string error = agent::prepare_listen_path(path);
  if (error.empty()) {
    agent::AgentSinks sinks;
    sinks.steps = steps_;
    sinks.on_warning = [log = log_](const std::string& w) {
      log.say("agent_socket", "agent socket: " + w);
    };
    agent_ = agent::AgentServer::start({.socket_path = path}, std::move(sinks), error);
  }
  if (agent_) return true;
  if (required)
    say("error", error, NodeLog::Level::kError);
  else
    say("no_agent_socket", "no agent socket (" + error + "); training steps are not taken here",
        NodeLog::Level::kWarning);
  return false;
}

void NodePipeline::add_sample_sink(std::shared_ptr<SampleSink> sink) {
  if (sampler_) sampler_->add_sink(std::move(sink));
}

void NodePipeline::add_step_sink(std::shared_ptr<training::StepSink> sink) {
  steps_->add(std::move(sink));
}

void NodePipeline::start() {
  if (started_) return;
  started_ = true;
  if (!agent_ && !options_.agent_socket.empty()) open_socket(false);
  if (live_) {
    agent::AgentServer* push_to = agent_.get();
    live_->add_listener(
        [log = log_, push_to](const diagnose::Diagnosis& d, const diagnose::FindingChange& c) {
          for (const auto& f : c.appeared) log.finding(f, "appeared");
          for (const auto& f : c.changed) log.finding(f, "changed");  // now on these GPUs / ranks
          for (const auto& f : c.cleared) log.finding(f, "cleared");
          if (push_to) push_to->push(diagnose::findings_message(d));
        });
    if (push_to) push_to->push(diagnose::findings_message(*live_->latest()));
    live_->start();
  }
  if (sampler_) sampler_->start();
  if (watcher_) watcher_->start();
}

void NodePipeline::poll() {
  if (sampler_) {
    std::vector<StaleGpu> stale = sampler_->stats().stale_gpus;
    const auto find = [](std::vector<StaleGpu>& in, unsigned gpu) {
      return std::find_if(in.begin(), in.end(), [&](const StaleGpu& g) { return g.gpu == gpu; });
    };
    for (StaleGpu& g : stale) {
      const auto known = find(reported_stale_, g.gpu);
      if (known != reported_stale_.end()) {
        g.for_s = std::max(g.for_s, known->for_s);
        continue;
      }
      say("gpu_stale",
          "GPU " + std::to_string(g.gpu) + ": " + (g.call.empty() ? "an NVML call" : g.call) +
              " has not returned in time; its readings are missing until it does (the other GPUs "
              "carry on)",
          NodeLog::Level::kWarning);
    }
    for (const StaleGpu& g : reported_stale_) {
      if (find(stale, g.gpu) != stale.end()) continue;
      char took[32];
      std::snprintf(took, sizeof took, "%.1f", g.for_s);
      say("gpu_answers", "GPU " + std::to_string(g.gpu) + " answers again (" +
                             (g.call.empty() ? "the call" : g.call) + " ran at least " + took +
                             " s)");
    }
    reported_stale_ = std::move(stale);
  }
#ifdef GPUMON_HAVE_RECORD
  if (recording_ && !reported_record_stop_) {
    if (const record::RecordingStatus st = recording_->writer->status(); st.stopped) {
      say("recording_stopped", "recording stopped: " + st.error, NodeLog::Level::kError);
      reported_record_stop_ = true;
    }
  }
#endif
}

void NodePipeline::stop() {
  if (stopped_) return;
  stopped_ = true;
  if (live_) live_->stop();        // before the socket its listener pushes to
  if (watcher_) watcher_->stop();  // before the recording closes: no sample after it
  if (agent_) agent_->stop();      // before the recording closes: no step after it
  if (rank_memory_) rank_memory_->close();
  if (sampler_) sampler_->stop();
#ifdef GPUMON_HAVE_RECORD
  if (recording_) recording_->writer->close();
#endif
}

void NodePipeline::set_recording_end_meta(std::string key, std::string value) {
#ifdef GPUMON_HAVE_RECORD
  if (recording_) recording_->writer->set_end_meta(std::move(key), std::move(value));
#else
  (void)key, (void)value;
#endif
}

std::string NodePipeline::simulated_scenario() const {
  return sampler_ ? sampler_->system().simulated_scenario : std::string();
}

bool NodePipeline::recording() const {
  return recording_ != nullptr;
}

RecordingCounts NodePipeline::recording_counts() const {
#ifdef GPUMON_HAVE_RECORD
  if (!recording_) return {};
  const record::RecordingStatus st = recording_->writer->status();
  return {st.ticks_written, st.steps_written, st.dropped, st.stopped, st.error};
#else
  return {};
#endif
}

std::string NodePipeline::recording_summary() const {
  if (!recording()) return "";
  const RecordingCounts c = recording_counts();
  std::string s = util::count_of(c.ticks, "tick") + ", " + util::count_of(c.steps, "step");
  if (c.dropped != 0) s += ", " + util::count_of(c.dropped, "item") + " dropped";
  if (c.stopped) s += " (" + c.error + ")";
  return s;
}

std::string NodePipeline::agent_summary() const {
  if (!agent_) return "";
  const agent::AgentServerStats st = agent_->stats();
  std::string s =
      util::count_of(st.steps, "step") + " from " + util::count_of(st.clients_accepted, "client");
  if (st.clients_dropped != 0) s += ", " + std::to_string(st.clients_dropped) + " dropped";
  return s;
}

}  // namespace gpumon::node
