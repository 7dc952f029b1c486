// SPDX-License-Identifier: MIT
// The job a process belongs to, as its scheduler, launcher or container runtime placed it: a
// Slurm job and step, a Kubernetes pod, a container, and the id that the ranks of one job share
// on every node. One rule, used by the training clients for their own hello (their environment
// and /proc/self) and by the node for any GPU process it sees (/proc/PID/cgroup and environ).
//
// It depends on the standard library only: the C++ client and the Python module link it.
// Thread-safety: pure functions.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace gpumon::job {

struct JobIdentity {
  /// The job's id: the same for every rank of one job on every node. From the first of
  /// GPUMON_JOB_ID, the Slurm job id (with ".STEP" for a numbered srun step), TORCHELASTIC_RUN_ID
  /// (unless "none"), and MASTER_ADDR:MASTER_PORT (the rendezvous every rank of a torchrun or
  /// Kubernetes job is given; a loopback address is replaced by the host's name, and a pod's
  /// namespace goes first: "team-a/trainer-master-0:23456").
  std::string id;
  std::string id_source;      ///< "gpumon", "slurm", "torchelastic", "rendezvous"; empty with no id
  std::string slurm_job_id;   ///< job_N in the cgroup path, else SLURM_JOB_ID
  std::string slurm_step_id;  ///< step_N ("0", "batch", "extern"), else SLURM_STEP_ID
  std::string pod;            ///< POD_NAME, or HOSTNAME inside a pod (the pod's name)
  std::string pod_namespace;  ///< POD_NAMESPACE, or (a client's own) service-account namespace
  std::string pod_uid;        ///< from the kubepods cgroup path
  std::string container_id;   ///< first 12 hex digits of the container's id (cgroup path)

  bool empty() const {
    return id.empty() && slurm_job_id.empty() && pod.empty() && pod_uid.empty() &&
           container_id.empty();
  }
  bool operator==(const JobIdentity&) const = default;
};

/// Each field with its key in JSON (the hello, the snapshot, the API, the recording): the one
/// list that writers and readers share. `Job` is JobIdentity or const JobIdentity.
template <typename Job, typename F>
void for_each_field(Job& j, F&& f) {
  f("id", j.id);
  f("id_source", j.id_source);
  f("slurm_job_id", j.slurm_job_id);
  f("slurm_step_id", j.slurm_step_id);
  f("pod", j.pod);
  f("namespace", j.pod_namespace);
  f("pod_uid", j.pod_uid);
  f("container_id", j.container_id);
}

/// `v` trimmed when usable as a job field, else empty: at most 128 bytes of characters safe in a
/// label or a file name (letters, digits, ._:@+=/-[]). A process sets its own environment and a
/// client its own hello: a value of other characters is dropped, not repaired.
std::string job_value(std::string_view v);

/// A short name for tables: "job 4711.0", else "pod team-a/infer-b", else "container
/// 0123456789ab"; empty for an empty job.
std::string job_tag(const JobIdentity& job);

/// A process's environment variable by name; nullopt when unset or unreadable.
using EnvLookup = std::function<std::optional<std::string>(std::string_view name)>;

struct JobInputs {
  std::string_view cgroup;  ///< /proc/PID/cgroup text; empty when unreadable
  EnvLookup env;            ///< may be empty: /proc/PID/environ needs the owner or root
  /// The pod's serviceaccount/namespace file: a client reads its own; the node never reads
  /// another process's files through /proc/PID/root (a process controls what is there).
  std::string_view namespace_file;
  std::string_view hostname;  ///< this host's name: qualifies a loopback MASTER_ADDR
};

/// Every value passes job_value(). The cgroup, which the kernel keeps, wins over the
/// environment, which the process sets.
JobIdentity job_identity(const JobInputs& in);

/// An EnvLookup over /proc/PID/environ text (NUL-separated NAME=value; a truncated last entry
/// is ignored).
EnvLookup environ_lookup(std::string environ_text);

/// Where a pod's namespace is inside its containers.
inline constexpr std::string_view kPodNamespaceFile =
    "/var/run/secrets/kubernetes.io/serviceaccount/namespace";

}  // namespace gpumon::job
