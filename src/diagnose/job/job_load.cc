// SPDX-License-Identifier: MIT
#include "diagnose/job/job_load.h"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <optional>
#include <set>
#include <system_error>
#include <thread>

#include "diagnose/run_data_loader.h"

namespace gpumon::diagnose {

std::variant<std::vector<std::string>, std::string> recording_paths(
    const std::vector<std::string>& args) {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  for (const auto& p : args) {
    std::error_code ec;
    if (!fs::is_directory(p, ec)) {
      out.push_back(p);
      continue;
    }
    std::vector<std::string> found;  // a file given and in a folder given is read once
    for (const auto& e : fs::directory_iterator(p, ec))
      if (e.path().extension() == ".gpumon" && e.is_regular_file(ec))
        found.push_back(e.path().string());
    if (ec) return p + ": cannot list the folder: " + ec.message();
    if (found.empty()) return p + ": no .gpumon recording in this folder";
    std::sort(found.begin(), found.end());
    out.insert(out.end(), found.begin(), found.end());
  }
  std::vector<std::string> unique;
  std::set<std::string> seen;
  for (auto& p : out) {
    std::error_code ec;
    const auto canonical = fs::weakly_canonical(p, ec);
    if (seen.insert(ec ? p : canonical.string()).second) unique.push_back(std::move(p));
  }
  return unique;
}

std::variant<JobRun, std::string> load_job(const std::vector<std::string>& paths,
                                           const Thresholds& t) {
  if (paths.empty()) return std::string("no recordings to join");
  std::vector<std::optional<NodeRun>> done(paths.size());
  std::vector<std::string> errors(paths.size());
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    std::size_t i = 0;
    try {
      for (i = next++; i < paths.size(); i = next++) {
        auto loaded = load_run_data(paths[i], job_node_limits());
        if (auto* e = std::get_if<std::string>(&loaded))
          errors[i] = std::move(*e);
        else
          done[i] = make_node(std::get<RunData>(std::move(loaded)), paths[i], t);
      }
    } catch (const std::exception& e) {  // out of memory: the file in hand says so
      if (i < paths.size()) errors[i] = paths[i] + ": " + e.what();
    } catch (...) {
      if (i < paths.size()) errors[i] = paths[i] + ": cannot be read";
    }
  };
  const std::size_t threads = std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1,
                                                      std::min<std::size_t>(4, paths.size()));
  std::vector<std::thread> pool;
  for (std::size_t k = 1; k < threads; ++k) {
    try {
      pool.emplace_back(work);
    } catch (const std::system_error&) {  // no thread to be had: fewer do the work
      break;
    }
  }
  work();
  for (auto& th : pool) th.join();
  std::vector<NodeRun> nodes;
  for (std::size_t i = 0; i < paths.size(); ++i) {
    if (!done[i]) return errors[i].empty() ? paths[i] + ": not read" : errors[i];
    nodes.push_back(std::move(*done[i]));
  }
  return join_nodes(std::move(nodes), t);
}

}  // namespace gpumon::diagnose
