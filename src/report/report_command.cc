// SPDX-License-Identifier: MIT
#include "report/report_command.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <future>
#include <optional>

#include "diagnose/job/job_load.h"
#include "report/job_report.h"
#include "report/report_diagnosis.h"
#include "report/report_html.h"
#include "report/summary.h"
#include "util/option_cursor.h"

namespace gpumon::report {
namespace {

constexpr const char* kUsage =
    "usage: gpumon report RUN.gpumon [-o REPORT.html] [--baseline OTHER.gpumon] [--force]\n"
    "       gpumon report NODE1.gpumon NODE2.gpumon ... | FOLDER [-o JOB.html] [--force]\n"
    "  writes one self-contained HTML page (default: RUN.html beside the recording); several\n"
    "  recordings are one job's nodes: a page of the job across them (default: job-ID.html\n"
    "  beside the first)\n";

struct ReportArgs {
  std::vector<std::string> paths;
  std::string path, output, baseline;
  bool force = false;
  bool help = false;
  std::size_t buckets = kDefaultBuckets;
};

std::string parse_args(const std::vector<std::string>& args, ReportArgs& a) {
  for (util::OptionCursor c(args); c.next();) {
    const std::string& opt = c.name();
    const bool value = c.has_inline_value();
    auto take = [&] { return c.value(); };
    if ((opt == "-h" || opt == "--help") && !value) {
      a.help = true;
    } else if (opt == "-o" || opt == "--output") {
      const auto v = take();
      if (!v || v->empty()) return opt + " needs a file name";
      a.output = *v;
    } else if (opt == "--baseline") {
      const auto v = take();
      if (!v || v->empty()) return "--baseline needs a recording";
      a.baseline = *v;
    } else if (opt == "--points") {  // points per chart series (tests and experiments)
      const auto v = take();
      std::size_t n = 0;
      if (!v || std::from_chars(v->data(), v->data() + v->size(), n).ptr != v->data() + v->size() ||
          n < 10 || n > 100000)
        return "--points needs a number from 10 to 100000";
      a.buckets = n;
    } else if (opt == "--force" && !value) {
      a.force = true;
    } else if (!opt.starts_with("-") && !value) {
      a.paths.push_back(opt);
    } else {
      return "unexpected argument '" + c.arg() + "'";
    }
  }
  if (a.paths.empty() && !a.help) return "which recording? give its path";
  return {};
}

std::string default_output(const std::string& path) {
  const auto slash = path.rfind('/');
  const auto dot = path.rfind('.');
  if (dot != std::string::npos && (slash == std::string::npos || dot > slash))
    return path.substr(0, dot) + ".html";
  return path + ".html";
}

// Writes `bytes` to a temporary file beside `path`, then renames it over: a reader never sees
// half a page. Empty on success, else why not.
std::string write_atomically(const std::string& path, const std::string& bytes) {
  std::string tmp = path + ".tmp-XXXXXX";
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) return "cannot write " + path + ": " + std::strerror(errno);
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = std::strerror(errno);
      ::close(fd);
      ::unlink(tmp.c_str());
      return "cannot write " + path + ": " + why;
    }
    done += static_cast<std::size_t>(n);
  }
  // The page shows the host, the run's command and its process names, as the recording does:
  // it stays readable by its owner only (mkstemp's 0600), whoever may read the folder.
  if (::close(fd) != 0 || ::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(tmp.c_str());
    return "cannot write " + path + ": " + why;
  }
  return {};
}

// "job-4711.html" beside the first recording (characters other than letters, digits, '.', '_'
// and '-' in the id become '_').
std::string job_output(const diagnose::JobRun& job) {
  std::string id = job.job_id.empty() ? "job" : "job-" + job.job_id;
  for (char& c : id)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') c = '_';
  const std::string& first = job.nodes.front().source;
  const auto slash = first.rfind('/');
  return (slash == std::string::npos ? std::string() : first.substr(0, slash + 1)) + id + ".html";
}

int job_report(const std::vector<std::string>& paths, ReportArgs& a, std::ostream& out,
               std::ostream& err) {
  if (!a.baseline.empty()) {
    err << "gpumon report: --baseline compares one recording with another; give one recording "
           "with it\n"
        << kUsage;
    return kReportUsage;
  }
  const auto t0 = std::chrono::steady_clock::now();
  auto loaded = diagnose::load_job(paths);
  if (auto* e = std::get_if<std::string>(&loaded)) {
    err << "gpumon report: " << *e << '\n';
    return kReportFailed;
  }
  auto& job = std::get<diagnose::JobRun>(loaded);
  if (a.output.empty()) a.output = job_output(job);
  struct stat st {};
  if (!a.force && ::stat(a.output.c_str(), &st) == 0) {
    err << "gpumon report: " << a.output << " already exists (use --force to replace it)\n";
    return kReportFailed;
  }
  const auto d = diagnose::diagnose_job(job);
  const std::string page = render_job_report(job, d, report_asset());
  if (auto e = write_atomically(a.output, page); !e.empty()) {
    err << "gpumon report: " << e << '\n';
    return kReportFailed;
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  out << "gpumon report: wrote " << a.output << " (" << fixed(page.size() / 1e6, 2) << " MB): job "
      << (job.job_id.empty() ? "(no id)" : job.job_id) << " on " << job.nodes.size()
      << " nodes; generated in " << fixed(s, 2) << " s\n";
  return kReportOk;
}

}  // namespace

int run_report_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  ReportArgs a;
  if (auto e = parse_args(args, a); !e.empty()) {
    err << "gpumon report: " << e << '\n' << kUsage;
    return kReportUsage;
  }
  if (a.help) {
    out << kUsage;
    return kReportOk;
  }
  auto named = diagnose::recording_paths(a.paths);
  if (auto* e = std::get_if<std::string>(&named)) {
    err << "gpumon report: " << *e << '\n';
    return kReportFailed;
  }
  const auto& paths = std::get<std::vector<std::string>>(named);
  if (paths.size() > 1) return job_report(paths, a, out, err);
  a.path = paths.front();
  if (a.output.empty()) a.output = default_output(a.path);
  struct stat st {};
  if (!a.force && ::stat(a.output.c_str(), &st) == 0) {
    err << "gpumon report: " << a.output << " already exists (use --force to replace it)\n";
    return kReportFailed;
  }
  const auto t0 = std::chrono::steady_clock::now();
  // The diagnosis reads the recording again (its own bounded form, its own connection): on a
  // second thread, so its pass overlaps the report's (2.5 + 4.2 s -> 4.2 s on a 24 h run with
  // steps, docs/PERFORMANCE.md).
  auto diagnosis_job = std::async(std::launch::async, diagnose_recording, a.path);
  auto run = load_run_report(a.path, a.buckets);
  if (auto* e = std::get_if<std::string>(&run)) {
    err << "gpumon report: " << *e << '\n';
    return kReportFailed;
  }
  std::optional<RunReport> baseline;
  if (!a.baseline.empty()) {
    auto base_diagnosis = std::async(std::launch::async, diagnose_recording, a.baseline);
    auto b = load_run_report(a.baseline, a.buckets);
    if (auto* e = std::get_if<std::string>(&b)) {
      err << "gpumon report: baseline " << *e << '\n';
      return kReportFailed;
    }
    baseline = std::get<RunReport>(std::move(b));
    if (auto d = base_diagnosis.get(); auto* ok = std::get_if<ReportDiagnosis>(&d))
      baseline->diagnosis = std::move(*ok);  // for the health score's verdict only
  }
  auto& r = std::get<RunReport>(run);
  // A diagnosis that fails costs the page its findings, not the page.
  auto diagnosis = diagnosis_job.get();
  if (auto* e = std::get_if<std::string>(&diagnosis)) {
    err << "gpumon report: no diagnosis: " << *e << '\n';
  } else {
    r.diagnosis = std::get<ReportDiagnosis>(std::move(diagnosis));
  }
  const std::string page = render_report(r, baseline ? &*baseline : nullptr, report_asset());
  if (auto e = write_atomically(a.output, page); !e.empty()) {
    err << "gpumon report: " << e << '\n';
    return kReportFailed;
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const auto length = run_totals(r).duration_s;
  out << "gpumon report: wrote " << a.output << " (" << fixed(page.size() / 1e6, 2)
      << " MB): a run of " << (length ? format_duration(*length) : "unknown length") << " on "
      << r.gpus.size() << " GPU(s), " << r.samples << " GPU-samples; generated in " << fixed(s, 2)
      << " s\n";
  if (!report_asset().has_charts)
    err << "gpumon report: built without uPlot (web/node_modules): tables and sparklines only\n";
  return kReportOk;
}

}  // namespace gpumon::report
