// SPDX-License-Identifier: MIT
// The report of one job across nodes (`gpumon report A.gpumon B.gpumon ...`): one
// self-contained page without scripts, sized by the job's nodes and ranks, not by its samples
// (16 nodes x 8 ranks: ~0.1 MB). It shows the job's score, each node's clock against rank 0's
// node, the findings across nodes, a table of nodes (health, warnings, GPU utilization over the
// run as a sparkline on the common clock) and of ranks (node, GPU, steps, step time, data wait,
// last step), then each node's own findings. A node's charts are its own report's
// (`gpumon report NODE.gpumon`).
//
// Thread-safety: pure functions.
#pragma once

#include <string>

#include "diagnose/job/job_diagnosis.h"
#include "report/report_asset.h"

namespace gpumon::report {

std::string render_job_report(const diagnose::JobRun& job, const diagnose::JobDiagnosis& d,
                              const ReportAsset& asset);

}  // namespace gpumon::report
