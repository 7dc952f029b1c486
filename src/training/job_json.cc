// SPDX-License-Identifier: MIT
#include "training/job_json.h"

#include <string>
#include <string_view>

namespace gpumon::training {

using nlohmann::json;

json job_json(const job::JobIdentity& job) {
  if (job.empty()) return json(nullptr);
  json o = json::object();
  job::for_each_field(job, [&](std::string_view key, const std::string& value) {
    if (!value.empty()) o[std::string(key)] = value;
  });
  return o;
}

job::JobIdentity job_from_json(const json& o) {
  job::JobIdentity job;
  if (!o.is_object()) return job;
  job::for_each_field(job, [&](std::string_view key, std::string& value) {
    const auto it = o.find(key);
    if (it != o.end() && it->is_string()) value = job::job_value(it->get_ref<const std::string&>());
  });
  return job;
}

}  // namespace gpumon::training
