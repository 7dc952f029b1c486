// SPDX-License-Identifier: MIT
// load_job: the recordings of one job's nodes read (job_node_limits(), on up to 4 threads: each
// holds one node's data while it is read and diagnosed) and joined (job_run.h). Shared by
// `gpumon doctor` and `gpumon report` given several recordings.
//
// Thread-safety: reads files; call from one thread.
#pragma once

#include <string>
#include <variant>
#include <vector>

#include "diagnose/job/job_run.h"

namespace gpumon::diagnose {

/// The recordings `args` name: files as given, a folder's *.gpumon files in name order; or why
/// a folder cannot be used (none in it, unreadable).
std::variant<std::vector<std::string>, std::string> recording_paths(
    const std::vector<std::string>& args);

/// The job of the recordings at `paths`, or why not (a file that cannot be read, recordings of
/// different jobs).
std::variant<JobRun, std::string> load_job(const std::vector<std::string>& paths,
                                           const Thresholds& t = {});

}  // namespace gpumon::diagnose
