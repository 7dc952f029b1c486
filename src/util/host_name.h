// SPDX-License-Identifier: MIT
// host_name: this machine's name as gpumon stores and shows it (recordings, snapshots, serve,
// the job id that replaces a loopback MASTER_ADDR). GPUMON_HOSTNAME overrides it, so that
// several agents on one machine can each play a node of one job (tests, a container whose
// host name is random); otherwise gethostname(). Empty when neither gives one.
//
// Thread-safety: reads the environment; call it where nothing sets the environment meanwhile.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <string>

namespace gpumon::util {

inline std::string host_name() {
  if (const char* name = std::getenv("GPUMON_HOSTNAME"); name != nullptr && *name != '\0')
    return name;
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "";
  return buf;
}

}  // namespace gpumon::util
