// SPDX-License-Identifier: MIT
#include "job/job_identity.h"

#include <algorithm>
#include <cstddef>
#include <map>
#include <utility>

namespace gpumon::job {
namespace {

constexpr std::size_t kMaxValueBytes = 128;

bool safe_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         std::string_view("._:@+=/-[]").find(c) != std::string_view::npos;
}

}  // namespace

std::string job_value(std::string_view v) {
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == ' ' || v.back() == '\t' || v.back() == '\n'))
    v.remove_suffix(1);
  if (v.empty() || v.size() > kMaxValueBytes || !std::all_of(v.begin(), v.end(), safe_char))
    return {};
  return std::string(v);
}

namespace {

bool is_hex(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
  });
}

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// A container id in one cgroup path component: 64 hex digits, alone (cgroupfs: /docker/ID,
// /kubepods/.../ID) or after a runtime's prefix (systemd: docker-ID.scope, cri-containerd-ID.scope,
// crio-ID.scope, libpod-ID.scope).
std::string container_of(std::string_view part) {
  if (part.size() > 6 && part.substr(part.size() - 6) == ".scope") part.remove_suffix(6);
  if (const std::size_t dash = part.rfind('-'); dash != std::string_view::npos && part.size() > 64)
    part.remove_prefix(dash + 1);
  if (part.size() != 64 || !is_hex(part)) return {};
  return std::string(part.substr(0, 12));
}

// A pod's UID in one component: "pod<uid>" (cgroupfs) or "kubepods-<qos>-pod<uid>.slice"
// (systemd, dashes written as underscores). Strict (a UUID), since under a private cgroup
// namespace the path may start at "/../../pod<uid>" with no kubepods component.
std::string pod_uid_of(std::string_view part) {
  const std::size_t at = part.rfind("pod");
  if (at == std::string_view::npos || (at > 0 && part[at - 1] != '-')) return {};
  std::string_view uid = part.substr(at + 3);
  if (uid.size() > 6 && uid.substr(uid.size() - 6) == ".slice") uid.remove_suffix(6);
  std::string out(uid);
  std::replace(out.begin(), out.end(), '_', '-');
  if (out.size() != 36) return {};
  for (std::size_t i = 0; i < out.size(); ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? out[i] != '-' : !is_hex({&out[i], 1})) return {};
  }
  return out;
}

// Slurm's cgroup plugin: .../job_N/step_S/... (v1 under /slurm/uid_U/, v2 under
// slurmstepd.scope/); Kubernetes' kubepods paths; a container runtime's id (the innermost, for
// nested runtimes). A last line without its newline was cut off by the read bound: ignored.
void read_cgroup(std::string_view text, JobIdentity& job) {
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    if (nl == std::string_view::npos) break;
    const std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl + 1);
    // hierarchy-ID:controllers:path
    const std::size_t first = line.find(':');
    const std::size_t second =
        first == std::string_view::npos ? std::string_view::npos : line.find(':', first + 1);
    if (second == std::string_view::npos) continue;
    std::string_view path = line.substr(second + 1);
    std::string container;
    while (!path.empty()) {
      const std::size_t slash = path.find('/');
      const std::string_view part = path.substr(0, slash);
      path = slash == std::string_view::npos ? std::string_view() : path.substr(slash + 1);
      if (part.empty()) continue;
      if (part.rfind("job_", 0) == 0 && all_digits(part.substr(4)) && job.slurm_job_id.empty()) {
        job.slurm_job_id = std::string(part.substr(4));
      } else if (part.rfind("step_", 0) == 0 && !job.slurm_job_id.empty() &&
                 job.slurm_step_id.empty()) {
        job.slurm_step_id = job_value(part.substr(5));
      } else if (job.pod_uid.empty()) {
        job.pod_uid = pod_uid_of(part);
      }
      if (std::string id = container_of(part); !id.empty()) container = std::move(id);
    }
    if (job.container_id.empty()) job.container_id = std::move(container);
  }
}

bool is_loopback(std::string_view addr) {
  return addr == "localhost" || addr == "::1" || addr == "[::1]" || addr == "0.0.0.0" ||
         addr.rfind("127.", 0) == 0;
}

std::string env_value(const EnvLookup& env, std::string_view name) {
  if (!env) return {};
  const std::optional<std::string> v = env(name);
  return v ? job_value(*v) : std::string();
}

}  // namespace

JobIdentity job_identity(const JobInputs& in) {
  JobIdentity job;
  read_cgroup(in.cgroup, job);
  // The kernel's cgroup wins over the environment, which the process sets itself; the
  // environment names what the cgroup cannot (Slurm without its cgroup plugin, a pod's name).
  if (job.slurm_job_id.empty()) {
    job.slurm_job_id = env_value(in.env, "SLURM_JOB_ID");
    if (!job.slurm_job_id.empty()) job.slurm_step_id = env_value(in.env, "SLURM_STEP_ID");
  }
  const bool in_pod = !job.pod_uid.empty() || !env_value(in.env, "KUBERNETES_SERVICE_HOST").empty();
  job.pod = env_value(in.env, "POD_NAME");
  if (job.pod.empty() && in_pod) job.pod = env_value(in.env, "HOSTNAME");
  job.pod_namespace = env_value(in.env, "POD_NAMESPACE");
  if (job.pod_namespace.empty() && in_pod) job.pod_namespace = job_value(in.namespace_file);

  if (std::string v = env_value(in.env, "GPUMON_JOB_ID"); !v.empty()) {
    job.id = std::move(v);
    job.id_source = "gpumon";
  } else if (!job.slurm_job_id.empty()) {
    // Each srun step of an allocation is a run of its own (a sweep, a retry); the step number
    // is the same on every node. The batch script's own step is the job's.
    job.id = job.slurm_job_id +
             (all_digits(job.slurm_step_id) ? "." + job.slurm_step_id : std::string());
    job.id_source = "slurm";
  } else if (std::string run = env_value(in.env, "TORCHELASTIC_RUN_ID");
             !run.empty() && run != "none") {
    job.id = std::move(run);
    job.id_source = "torchelastic";
  } else if (std::string addr = env_value(in.env, "MASTER_ADDR"),
             port = env_value(in.env, "MASTER_PORT");
             !addr.empty() && !port.empty()) {
    // A loopback address names no job across machines (every single-node torchrun has
    // 127.0.0.1:29500): qualified by the host. A pod's service name repeats in every namespace.
    if (is_loopback(addr)) addr = job_value(in.hostname);
    if (!addr.empty()) {
      job.id =
          (job.pod_namespace.empty() ? std::string() : job.pod_namespace + "/") + addr + ":" + port;
      job.id_source = "rendezvous";
      if (job.id.size() > 128) job.id.clear(), job.id_source.clear();
    }
  }
  return job;
}

std::string job_tag(const JobIdentity& job) {
  if (!job.id.empty()) return "job " + job.id;
  if (!job.pod.empty())
    return "pod " + (job.pod_namespace.empty() ? std::string() : job.pod_namespace + "/") + job.pod;
  if (!job.slurm_job_id.empty()) return "job " + job.slurm_job_id;
  if (!job.container_id.empty()) return "container " + job.container_id;
  return {};
}

EnvLookup environ_lookup(std::string environ_text) {
  std::map<std::string, std::string, std::less<>> vars;
  std::string_view text = environ_text;
  while (!text.empty()) {
    const std::size_t end = text.find('\0');
    if (end == std::string_view::npos) break;  // cut off by the read bound
    const std::string_view entry = text.substr(0, end);
    text.remove_prefix(end + 1);
    if (const std::size_t eq = entry.find('='); eq != std::string_view::npos && eq > 0)
      vars.emplace(std::string(entry.substr(0, eq)), std::string(entry.substr(eq + 1)));
  }
  return [vars = std::move(vars)](std::string_view name) -> std::optional<std::string> {
    const auto it = vars.find(name);
    return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
}

}  // namespace gpumon::job
