// SPDX-License-Identifier: MIT
#include "cli/doctor_command.h"

#include <nlohmann/json.hpp>

#include "diagnose/diagnosis.h"
#include "diagnose/job/job_diagnosis.h"
#include "diagnose/job/job_load.h"
#include "diagnose/run_data_loader.h"
#include "util/option_cursor.h"

namespace gpumon {
namespace {

constexpr const char* kUsage =
    "usage: gpumon doctor RUN.gpumon [--json] [--min-severity info|warning|critical]\n"
    "       gpumon doctor NODE1.gpumon NODE2.gpumon ... | FOLDER  [same options]\n"
    "  the findings and health score of a recording (docs/DIAGNOSES.md); several recordings\n"
    "  (one per node, or a folder of them) are one job's nodes, joined on one clock and\n"
    "  compared across nodes (docs/DIAGNOSES.md, \"A job across nodes\")\n";

struct DoctorArgs {
  std::vector<std::string> paths;
  bool json = false, help = false;
  diagnose::Severity min_severity = diagnose::Severity::kInfo;
};

std::string parse_args(const std::vector<std::string>& args, DoctorArgs& a) {
  for (util::OptionCursor c(args); c.next();) {
    const std::string& opt = c.name();
    const bool inline_value = c.has_inline_value();
    if ((opt == "-h" || opt == "--help") && !inline_value) {
      a.help = true;
    } else if (opt == "--json" && !inline_value) {
      a.json = true;
    } else if (opt == "--min-severity") {
      const auto v = c.value();
      const auto s = v ? diagnose::parse_severity(*v) : std::nullopt;
      if (!s) return "--min-severity needs info, warning or critical";
      a.min_severity = *s;
    } else if (!opt.starts_with("-") && !inline_value) {
      a.paths.push_back(opt);
    } else {
      return "unexpected argument '" + c.arg() + "'";
    }
  }
  if (a.paths.empty() && !a.help) return "which recording? give its path";
  return {};
}

int doctor_job(const std::vector<std::string>& paths, const DoctorArgs& a, std::ostream& out,
               std::ostream& err) {
  auto joined = diagnose::load_job(paths);
  if (const auto* e = std::get_if<std::string>(&joined)) {
    err << "gpumon doctor: " << *e << "\n";
    return kDoctorFailed;
  }
  auto& job = std::get<diagnose::JobRun>(joined);
  const auto d = diagnose::diagnose_job(job);
  if (a.json)
    out << diagnose::job_to_json(job, d, a.min_severity)
               .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
        << "\n";
  else
    out << diagnose::render_job_text(job, d, a.min_severity);
  return kDoctorOk;
}

}  // namespace

int run_doctor_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  try {
    DoctorArgs a;
    if (const auto e = parse_args(args, a); !e.empty()) {
      err << "gpumon doctor: " << e << "\n" << kUsage;
      return kDoctorUsage;
    }
    if (a.help) {
      out << kUsage;
      return kDoctorOk;
    }
    auto named = diagnose::recording_paths(a.paths);
    if (const auto* e = std::get_if<std::string>(&named)) {
      err << "gpumon doctor: " << *e << "\n";
      return kDoctorFailed;
    }
    const auto& paths = std::get<std::vector<std::string>>(named);
    if (paths.size() > 1) return doctor_job(paths, a, out, err);
    const std::string& path = paths.front();
    auto loaded = diagnose::load_run_data(path);
    if (const auto* e = std::get_if<std::string>(&loaded)) {
      err << "gpumon doctor: " << *e << "\n";
      return kDoctorFailed;
    }
    const auto& run = std::get<diagnose::RunData>(loaded);
    const auto d = diagnose::diagnose(run);
    if (a.json)
      out << diagnose::to_json(d, path, a.min_severity, run.simulated_scenario).dump() << "\n";
    else
      out << diagnose::render_text(d, path, a.min_severity, run.simulated_scenario);
    return kDoctorOk;
  } catch (const std::exception& e) {  // out of memory and the like: a message, not a crash
    err << "gpumon doctor: " << e.what() << "\n";
    return kDoctorFailed;
  }
}

}  // namespace gpumon
