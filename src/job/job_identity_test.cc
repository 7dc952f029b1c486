// SPDX-License-Identifier: MIT
// The job of a process from its cgroup path and environment: Slurm (cgroup v1 and v2), Kubernetes
// (cgroupfs and systemd drivers), plain containers, torchrun, and hostile values.
#include "job/job_identity.h"

#include <gtest/gtest.h>

#include <string>

namespace gpumon::job {
namespace {

using namespace std::string_literals;

constexpr std::string_view kContainer =
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

JobIdentity from(std::string_view cgroup, std::string environ = {}, std::string_view ns = {},
                 std::string_view host = "nodeA") {
  return job_identity({cgroup, environ_lookup(std::move(environ)), ns, host});
}

TEST(JobIdentity, SlurmCgroupV1AndV2) {
  const JobIdentity v1 = from(
      "12:memory:/slurm/uid_1000/job_4711/step_0/task_1\n"
      "11:devices:/slurm/uid_1000/job_4711/step_0/task_1\n");
  EXPECT_EQ(v1.slurm_job_id, "4711");
  EXPECT_EQ(v1.slurm_step_id, "0");
  EXPECT_EQ(v1.id, "4711.0");  // each srun step is a run of its own
  EXPECT_EQ(v1.id_source, "slurm");
  const JobIdentity v2 = from("0::/system.slice/slurmstepd.scope/job_88/step_batch/user/task_0\n");
  EXPECT_EQ(v2.slurm_job_id, "88");
  EXPECT_EQ(v2.slurm_step_id, "batch");
  EXPECT_EQ(v2.id, "88");  // the batch script's step is the job's
  EXPECT_TRUE(v2.pod.empty());
  EXPECT_TRUE(v2.container_id.empty());
}

TEST(JobIdentity, TheCgroupWinsOverTheEnvironment) {
  // The process sets its environment; the kernel keeps its cgroup.
  const JobIdentity j = from("0::/system.slice/slurmstepd.scope/job_88/step_extern/user/task_0\n",
                             "SLURM_JOB_ID=99\0SLURM_STEP_ID=3\0"s);
  EXPECT_EQ(j.slurm_job_id, "88");
  EXPECT_EQ(j.slurm_step_id, "extern");
  EXPECT_EQ(j.id, "88");
  // Only the environment: a job under a cgroup plugin gpumon does not know.
  const JobIdentity e = from("0::/user.slice\n", "SLURM_JOB_ID=91\0"s);
  EXPECT_EQ(e.slurm_job_id, "91");
  EXPECT_EQ(e.slurm_step_id, "");
  EXPECT_EQ(e.id, "91");
  EXPECT_EQ(from("0::/user.slice\n", "SLURM_JOB_ID=91\0SLURM_STEP_ID=2\0"s).id, "91.2");
}

TEST(JobIdentity, KubernetesSystemdDriver) {
  const std::string cgroup =
      "0::/kubepods.slice/kubepods-burstable.slice/"
      "kubepods-burstable-pod1f2e3d4c_5b6a_7980_a1b2_c3d4e5f60718.slice/cri-containerd-"s +
      std::string(kContainer) + ".scope\n";
  const JobIdentity j =
      from(cgroup, "HOSTNAME=train-worker-3\0KUBERNETES_SERVICE_HOST=10.0.0.1\0"s, "research\n");
  EXPECT_EQ(j.pod_uid, "1f2e3d4c-5b6a-7980-a1b2-c3d4e5f60718");
  EXPECT_EQ(j.container_id, "0123456789ab");
  EXPECT_EQ(j.pod, "train-worker-3");
  EXPECT_EQ(j.pod_namespace, "research");
  EXPECT_TRUE(j.id.empty());  // a pod alone names no job: its ranks are in other pods
}

TEST(JobIdentity, KubernetesCgroupfsDriverAndDownwardApi) {
  const std::string cgroup =
      "11:memory:/kubepods/besteffort/pod1f2e3d4c-5b6a-7980-a1b2-c3d4e5f60718/"s +
      std::string(kContainer) + "\n";
  const JobIdentity j = from(cgroup,
                             "POD_NAME=pytorchjob-worker-0\0POD_NAMESPACE=team-a\0"
                             "MASTER_ADDR=pytorchjob-master-0\0MASTER_PORT=23456\0"s);
  EXPECT_EQ(j.pod_uid, "1f2e3d4c-5b6a-7980-a1b2-c3d4e5f60718");
  EXPECT_EQ(j.pod, "pytorchjob-worker-0");
  EXPECT_EQ(j.pod_namespace, "team-a");
  // The master's service name repeats in every namespace: the namespace goes first.
  EXPECT_EQ(j.id, "team-a/pytorchjob-master-0:23456");
  EXPECT_EQ(j.id_source, "rendezvous");
}

TEST(JobIdentity, HostnameIsAPodNameOnlyInsideAPod) {
  const JobIdentity j = from("0::/user.slice/user-1000.slice/session-3.scope\n",
                             "HOSTNAME=workstation\0"s, "default");
  EXPECT_TRUE(j.pod.empty());
  EXPECT_TRUE(j.pod_namespace.empty());
  EXPECT_TRUE(j.empty());
}

TEST(JobIdentity, PlainContainers) {
  EXPECT_EQ(from("0::/system.slice/docker-"s + std::string(kContainer) + ".scope\n").container_id,
            "0123456789ab");
  EXPECT_EQ(from("4:cpu:/docker/"s + std::string(kContainer) + "\n").container_id, "0123456789ab");
  EXPECT_EQ(from("0::/machine.slice/libpod-"s + std::string(kContainer) + ".scope/container\n")
                .container_id,
            "0123456789ab");
  // Not 64 hex digits: no container.
  EXPECT_EQ(from("0::/system.slice/docker-0123.scope\n").container_id, "");
}

TEST(JobIdentity, IdPrecedence) {
  EXPECT_EQ(from("", "GPUMON_JOB_ID=exp-7\0SLURM_JOB_ID=5\0"s).id, "exp-7");
  EXPECT_EQ(from("", "GPUMON_JOB_ID=exp-7\0"s).id_source, "gpumon");
  EXPECT_EQ(from("", "TORCHELASTIC_RUN_ID=run42\0MASTER_ADDR=a\0MASTER_PORT=1\0"s).id, "run42");
  // torchrun's default run id is "none": not an id.
  EXPECT_EQ(from("", "TORCHELASTIC_RUN_ID=none\0MASTER_ADDR=node1\0MASTER_PORT=29500\0"s).id,
            "node1:29500");
  EXPECT_EQ(from("", "MASTER_ADDR=node1\0"s).id, "");
  // Every single-node torchrun has 127.0.0.1:29500: the host's name stands in for loopback.
  EXPECT_EQ(from("", "MASTER_ADDR=127.0.0.1\0MASTER_PORT=29500\0"s).id, "nodeA:29500");
  EXPECT_EQ(from("", "MASTER_ADDR=localhost\0MASTER_PORT=12355\0"s).id, "nodeA:12355");
  EXPECT_EQ(from("", "MASTER_ADDR=127.0.0.1\0MASTER_PORT=29500\0"s, {}, "").id, "");
  EXPECT_TRUE(from("", "").empty());
}

TEST(JobIdentity, HostileValuesAreDropped) {
  const JobIdentity j =
      from("0::/slurm/uid_0/job_12x/step_0\n",
           "SLURM_JOB_ID=1\"} 1\nfake_metric 2\0POD_NAME="s + std::string(200, 'a') +
               "\0KUBERNETES_SERVICE_HOST=x\0GPUMON_JOB_ID=a b\0"s);
  EXPECT_EQ(j.slurm_job_id, "");  // job_12x is not a job id; the environment's is not a value
  EXPECT_EQ(j.pod, "");
  EXPECT_EQ(j.id, "");
}

TEST(JobIdentity, Tag) {
  JobIdentity j;
  EXPECT_EQ(job_tag(j), "");
  j.container_id = "0123456789ab";
  EXPECT_EQ(job_tag(j), "container 0123456789ab");
  j.pod = "infer-b";
  EXPECT_EQ(job_tag(j), "pod infer-b");
  j.pod_namespace = "team-a";
  EXPECT_EQ(job_tag(j), "pod team-a/infer-b");
  j.id = "4711";
  EXPECT_EQ(job_tag(j), "job 4711");  // the job first: its ranks span pods
}

TEST(JobIdentity, EnvironLookupIgnoresACutOffEntry) {
  const EnvLookup env = environ_lookup("A=1\0B=two=2\0=x\0C=trunc"s);
  EXPECT_EQ(env("A"), "1");
  EXPECT_EQ(env("B"), "two=2");
  EXPECT_EQ(env("C"), std::nullopt);
  EXPECT_EQ(env(""), std::nullopt);
}

TEST(JobIdentity, PrivateCgroupNamespaceAndNestedRuntimes) {
  // cgroup v2 with a private namespace: the path starts above the container, no "kubepods".
  const JobIdentity j =
      from("0::/../../pod1f2e3d4c-5b6a-7980-a1b2-c3d4e5f60718/"s + std::string(kContainer) + "\n");
  EXPECT_EQ(j.pod_uid, "1f2e3d4c-5b6a-7980-a1b2-c3d4e5f60718");
  EXPECT_EQ(j.container_id, "0123456789ab");
  // A runtime inside a container (kind, docker-in-docker): the innermost container.
  const JobIdentity n =
      from("0::/docker/"s + std::string(64, 'a') + "/kubelet.slice/cri-containerd-" +
           std::string(kContainer) + ".scope\n");
  EXPECT_EQ(n.container_id, "0123456789ab");
  // Not a UUID after "pod": no pod.
  EXPECT_EQ(from("0::/podcast/x\n").pod_uid, "");
}

TEST(JobIdentity, ACutOffLastLineIsIgnored) {
  EXPECT_TRUE(from("0::/system.slice/slurmstepd.scope/job_47").empty());
  EXPECT_EQ(from("1:cpu:/slurm/uid_0/job_47/step_0/task_0\n0::/slurm/uid_0/job_4").slurm_job_id,
            "47");
}

TEST(JobIdentity, MalformedCgroupLines) {
  EXPECT_TRUE(from("garbage\n::\n0:\n\n/job_5/step_1\n").empty());
  EXPECT_EQ(from("0::/job_5\n").slurm_job_id, "5");
}

}  // namespace
}  // namespace gpumon::job
