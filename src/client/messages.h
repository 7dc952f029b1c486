// SPDX-License-Identifier: MIT
// The client's messages as protocol lines (training/protocol.h, docs/python.md "Protocol"), written
// by hand: doubles as the shortest round-trip text (the agent stores them exactly, as it does
// Python's repr()), strings escaped, absent values as null.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "gpumon/monitor.h"
#include "job/job_identity.h"

namespace gpumon::client {

struct HelloFields {
  std::int64_t pid = 0;
  std::optional<std::int64_t> rank;  ///< RANK, LOCAL_RANK, WORLD_SIZE
  std::optional<std::int64_t> local_rank;
  std::optional<std::int64_t> world_size;
  std::optional<std::string> hostname;
  std::optional<std::string> torch_version;
  std::optional<std::string> device;                ///< "cuda:0", "cpu"
  std::optional<std::string> pci_bus_id;            ///< of `device`
  std::optional<std::string> device_uuid;           ///< of `device`
  std::optional<std::string> cuda_visible_devices;  ///< the environment's, verbatim
  std::optional<std::string> cuda_device_order;
  job::JobIdentity job;  ///< the process's own: job_identity() of its environment and cgroup
};

struct OomFields {
  std::int64_t step = 0;
  std::optional<std::int64_t> requested_bytes;
  std::optional<std::string> device;
  std::optional<std::string> path;  ///< the forensics bundle, when one was written
};

struct StepFields {
  std::int64_t step = 0;
  double t_start_s = 0;   ///< wall clock, seconds since the epoch
  double cpu_step_s = 0;  ///< t_end = t_start + cpu_step_s
  std::optional<double> gpu_step_s;
  /// nullopt: this process never timed a batch fetch (no wrapped loader, no trainer callback),
  /// so its wait is unknown; 0 once it has is a step that did not wait.
  std::optional<double> data_wait_s;
  std::optional<AllocatorStats> mem;  ///< none: "mem":null
};

std::string hello_message(const HelloFields& h);
/// The `device` message: the device fields of `h` (torch_version, device, pci_bus_id,
/// device_uuid), for a process that resolved its device after its hello.
std::string device_message(const HelloFields& h);
/// Replaces `out` with the step line (reusing its capacity: no allocation once warm).
void step_message(const StepFields& s, std::string& out);
std::string oom_message(const OomFields& o);

/// An integer environment variable as Python's int() reads it (surrounding blanks allowed);
/// nullopt when unset or not an integer.
std::optional<std::int64_t> env_int(const char* name);

}  // namespace gpumon::client
