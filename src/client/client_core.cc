// SPDX-License-Identifier: MIT
#include "client/client_core.h"

#include <unistd.h>

#include <cstdlib>
#include <string_view>

#include "agent/socket_path.h"
#include "client/agent_launcher.h"
#include "client/messages.h"
#include "util/host_name.h"
#include "util/small_file.h"

namespace gpumon::client {
namespace {

std::optional<std::string> env_text(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::optional<std::string>(v) : std::nullopt;
}

// The first 16 KiB of a small regular file; empty when it cannot be read.
std::string small_file(const std::string& path) {
  auto file = util::read_small_file(path, 16384);
  return file ? std::move(file->text) : std::string();
}

// This process's job, by the rule the node applies to every GPU process it sees.
job::JobIdentity own_job() {
  // Never blocks (a FIFO in a file's place is refused); a cut-off last cgroup line is ignored.
  const std::string cgroup = small_file("/proc/self/cgroup");
  const auto env = [](std::string_view name) { return env_text(std::string(name).c_str()); };
  const bool in_pod =
      cgroup.find("kubepods") != std::string::npos || env("KUBERNETES_SERVICE_HOST").has_value();
  const std::string ns = in_pod ? small_file(std::string(job::kPodNamespaceFile)) : "";
  const std::string host = util::host_name();
  return job::job_identity({cgroup, env, ns, host});
}

}  // namespace

AgentAttach attach_agent(const AttachOptions& options) {
  AgentAttach out;
  const auto from_env = env_text("GPUMON_AGENT_SOCKET");
  const bool given = !options.socket_path.empty() || (from_env && !from_env->empty());
  out.socket_path = !options.socket_path.empty() ? options.socket_path
                    : given                      ? *from_env
                                                 : agent::default_socket_path();
  if (given) return out;
  // Before connecting or starting anything: a default folder another user can write to may hold
  // a fake agent or a planted lock link, and the agent would refuse it after a 5 s wait.
  if (std::string why = agent::check_socket_folder(out.socket_path, false); !why.empty()) {
    out.warning_kind = "unsafe-folder";
    out.warning = why + "; gpumon does nothing";
    return out;
  }
  if (is_listening(out.socket_path)) return out;
  const auto binary = options.start_agent
                          ? find_gpumon_binary(options.fallback_binary, options.own_binary)
                          : std::nullopt;
  if (!binary) {
    out.warning_kind = "no-agent";
    out.warning =
        "no agent listens on " + out.socket_path +
        (options.start_agent ? " and no gpumon binary was found (set GPUMON_BINARY or PATH, or run "
                               "`gpumon agent`)"
                             : " (start_agent is off; run `gpumon agent`)") +
        "; gpumon does nothing";
    return out;
  }
  const std::string record =
      !options.record.empty() ? options.record : env_text("GPUMON_RECORD").value_or("");
  if (const std::string why = start_agent_once(*binary, out.socket_path, record); !why.empty()) {
    out.warning_kind = "agent-start";
    out.warning = *binary + " agent did not start on " + out.socket_path + ": " + why +
                  "; gpumon does nothing";
  }
  return out;
}

std::string hello_line(const DeviceIdentity& device) {
  HelloFields h;
  h.pid = ::getpid();
  h.rank = env_int("RANK");
  h.local_rank = env_int("LOCAL_RANK");
  h.world_size = env_int("WORLD_SIZE");
  if (auto host = util::host_name(); !host.empty()) h.hostname = std::move(host);
  h.torch_version = device.torch_version;
  h.device = device.device;
  h.pci_bus_id = device.pci_bus_id;
  h.device_uuid = device.device_uuid;
  h.cuda_visible_devices = env_text("CUDA_VISIBLE_DEVICES");
  h.cuda_device_order = env_text("CUDA_DEVICE_ORDER");
  h.job = own_job();
  return hello_message(h);
}

std::string device_line(const DeviceIdentity& device) {
  HelloFields h;
  h.torch_version = device.torch_version;
  h.device = device.device;
  h.pci_bus_id = device.pci_bus_id;
  h.device_uuid = device.device_uuid;
  return device_message(h);
}

std::string oom_line(std::int64_t step, std::optional<std::int64_t> requested_bytes,
                     std::optional<std::string> device, std::optional<std::string> path) {
  return oom_message({step, requested_bytes, std::move(device), std::move(path)});
}

}  // namespace gpumon::client
