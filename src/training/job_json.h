// SPDX-License-Identifier: MIT
// A job (job/job_identity.h) in JSON: the hello's "job", the snapshot's and the API's process
// "job", the recording's hellos. Only the fields that are known; null when none is.
//
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>

#include "job/job_identity.h"

namespace gpumon::training {

nlohmann::json job_json(const job::JobIdentity& job);

/// The job of `o` (an object as job_json() writes it); fields that are not strings, or not
/// job_value()s, are left empty. Anything else gives an empty job.
job::JobIdentity job_from_json(const nlohmann::json& o);

}  // namespace gpumon::training
