// SPDX-License-Identifier: MIT
// diagnose_job: what one job's nodes show side by side, beyond each node's own diagnosis:
// - straggler: the slowest rank of the whole job (rules/straggler.cc's measures over every
//   rank of every node), named with its node and GPU; a node's own straggler finding for the
//   same rank gives way to it;
// - straggler_node: a node whose ranks are all slower than the other nodes' (the job runs at
//   its pace), which no one rank shows;
// - node_throttled: the GPUs of some nodes throttle and the others' do not;
// - hang: the job hung (a node's hang finding), and the rank that stopped first: the one that
//   died first, else the one steps behind, else the one whose GPU idled while the others spun in
//   their collective; or that it cannot be told.
// The job's score is the lowest of the nodes' scores and of these findings' own (100 minus
// their deductions): a job is as healthy as its sickest node, and a finding across nodes is
// not counted twice.
//
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "diagnose/diagnosis.h"
#include "diagnose/job/job_run.h"

namespace gpumon::diagnose {

struct JobDiagnosis {
  Diagnosis across;  ///< the findings across nodes, scored on their own
  bool scored = false;
  int health_score = 100;
};

/// Diagnoses across `job`'s nodes (a node's findings that one across nodes replaces are taken
/// out of its diagnosis, which is scored again).
JobDiagnosis diagnose_job(JobRun& job, const Thresholds& t = {});

/// `gpumon doctor --json` for several recordings: {"schema", "job", "world_size", "simulated",
/// "health_score", "clock_reference", "nodes": [{"name", "recording", "ranks", "clock",
/// "diagnosis"}], "deductions", "not_judged", "findings"} (docs/DIAGNOSES.md, "A job across
/// nodes").
nlohmann::json job_to_json(const JobRun& job, const JobDiagnosis& d,
                           Severity min_severity = Severity::kInfo);
std::string render_job_text(const JobRun& job, const JobDiagnosis& d,
                            Severity min_severity = Severity::kInfo);

}  // namespace gpumon::diagnose
