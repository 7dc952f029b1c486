// SPDX-License-Identifier: MIT
#include "cli/doctor_command.h"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "diagnose/diagnosis.h"
#include "diagnose/job/job_diagnosis.h"
#include "diagnose/run_data_loader.h"
#include "util/option_cursor.h"

namespace gpumon {
namespace {

constexpr const char* kUsage =
    "usage: gpumon doctor RUN.gpumon [--json] [--min-severity info|warning|critical]\n"
    "       gpumon doctor NODE1.gpumon NODE2.gpumon ... | FOLDER  [same options]\n"
    "  the findings and health score of a recording (docs/DIAGNOSES.md); several recordings\n"
    "  (one per node, or a folder of them) are one job's nodes, joined on one clock and\n"
    "  compared across nodes (docs/DIAGNOSES.md \"Jobs\")\n";

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

// The recordings named: files as given, a folder's *.gpumon files in name order.
std::string expand(const std::vector<std::string>& paths, std::vector<std::string>& out) {
  namespace fs = std::filesystem;
  for (const auto& p : paths) {
    std::error_code ec;
    if (!fs::is_directory(p, ec)) {
      out.push_back(p);
      continue;
    }
    std::vector<std::string> found;
    for (const auto& e : fs::directory_iterator(p, ec))
      if (e.path().extension() == ".gpumon" && e.is_regular_file(ec))
        found.push_back(e.path().string());
    if (ec) return p + ": cannot list the folder: " + ec.message();
    if (found.empty()) return p + ": no .gpumon recording in this folder";
    std::sort(found.begin(), found.end());
    out.insert(out.end(), found.begin(), found.end());
  }
  return {};
}

// Each node's recording read and diagnosed, on as many threads as there are cores (at most 4:
// each holds a node's full-detail data while it works).
std::variant<std::vector<diagnose::NodeRun>, std::string> load_nodes(
    const std::vector<std::string>& paths) {
  std::vector<std::optional<diagnose::NodeRun>> done(paths.size());
  std::vector<std::string> errors(paths.size());
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    try {
      for (std::size_t i = next++; i < paths.size(); i = next++) {
        auto loaded = diagnose::load_run_data(paths[i]);
        if (auto* e = std::get_if<std::string>(&loaded))
          errors[i] = std::move(*e);
        else
          done[i] = diagnose::make_node(std::get<diagnose::RunData>(std::move(loaded)), paths[i]);
      }
    } catch (const std::exception& e) {  // out of memory: the file in hand says so
      for (auto& x : errors)
        if (x.empty()) x = e.what();
    }
  };
  const auto threads = std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1,
                                               std::min<std::size_t>(4, paths.size()));
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  std::vector<diagnose::NodeRun> nodes;
  for (std::size_t i = 0; i < paths.size(); ++i) {
    if (!done[i]) return errors[i].empty() ? paths[i] + ": not read" : errors[i];
    nodes.push_back(std::move(*done[i]));
  }
  return nodes;
}

int doctor_job(const std::vector<std::string>& paths, const DoctorArgs& a, std::ostream& out,
               std::ostream& err) {
  auto loaded = load_nodes(paths);
  if (const auto* e = std::get_if<std::string>(&loaded)) {
    err << "gpumon doctor: " << *e << "\n";
    return kDoctorFailed;
  }
  auto nodes = std::get<std::vector<diagnose::NodeRun>>(std::move(loaded));
  auto joined = diagnose::join_nodes(std::move(nodes));
  if (const auto* e = std::get_if<std::string>(&joined)) {
    err << "gpumon doctor: " << *e << "\n";
    return kDoctorFailed;
  }
  auto& job = std::get<diagnose::JobRun>(joined);
  const auto d = diagnose::diagnose_job(job);
  if (a.json)
    out << diagnose::job_to_json(job, d, a.min_severity).dump() << "\n";
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
    std::vector<std::string> paths;
    if (const auto e = expand(a.paths, paths); !e.empty()) {
      err << "gpumon doctor: " << e << "\n";
      return kDoctorFailed;
    }
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
