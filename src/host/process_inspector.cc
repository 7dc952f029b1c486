// SPDX-License-Identifier: MIT
#include "host/process_inspector.h"

#include <unistd.h>

#include <cerrno>
#include <string>

#include "host/proc_parse.h"
#include "host/text_clean.h"
#include "util/host_name.h"

namespace gpumon::host {
namespace {

using std::chrono::steady_clock;
using std::chrono::system_clock;

constexpr std::size_t kStatReadBytes = 4096;
constexpr std::size_t kStatusReadBytes = 16384;
constexpr std::size_t kSystemFileReadBytes = 1U << 20;  // /proc/stat's intr line can be long
constexpr std::size_t kMaxFdsChecked = 16384;
constexpr std::size_t kCgroupReadBytes = 16384;
// Past this, the variables after it are not seen (job_identity() ignores a cut-off entry).
constexpr std::size_t kEnvironReadBytes = 1U << 18;

bool is_permission_error(int error) {
  return error == EACCES || error == EPERM;
}

// The Missing reason for a failed read of a /proc file.
Missing missing_for(int error) {
  return is_permission_error(error) ? Missing::kNoPermission : Missing::kNotAvailable;
}

void set_all_missing(HostProcessInfo& info, Missing why) {
  info.uid = info.ppid = Reading<unsigned>::missing(why);
  info.user = info.comm = info.command_line = Reading<std::string>::missing(why);
  info.cpu_percent = Reading<double>::missing(why);
  info.rss_bytes = Reading<std::uint64_t>::missing(why);
  info.start_time = Reading<system_clock::time_point>::missing(why);
}

}  // namespace

std::string_view to_string(Visibility v) {
  switch (v) {
    case Visibility::kVisible: return "visible";
    case Visibility::kNotVisible: return "not_visible";
    case Visibility::kOtherProcess: return "other_process";
    case Visibility::kHidden: return "hidden";
  }
  return "not_visible";
}

std::string_view to_string(CpuWindow w) {
  return w == CpuWindow::kInterval ? "interval" : "since_start";
}

ProcessInspector::ProcessInspector(const ProcFiles& files, UserNames& users,
                                   InspectorOptions options)
    : files_(files), users_(users), options_(options) {
  if (options_.clock_ticks_per_second <= 0)
    options_.clock_ticks_per_second = ::sysconf(_SC_CLK_TCK);
  if (options_.clock_ticks_per_second <= 0) options_.clock_ticks_per_second = 100;
  if (options_.page_size_bytes <= 0) options_.page_size_bytes = ::sysconf(_SC_PAGESIZE);
  if (options_.page_size_bytes <= 0) options_.page_size_bytes = 4096;
  hostname_ = util::host_name();
  if (const FileText stat = files_.read("stat", kSystemFileReadBytes); stat.ok()) {
    boot_time_s_ = parse_boot_time(stat.text);
  }
  if (const FileText mounts = files_.read("self/mountinfo", kSystemFileReadBytes); mounts.ok()) {
    hides_other_users_ = proc_hides_other_users(mounts.text);
  }
}

std::vector<HostProcessInfo> ProcessInspector::inspect(const std::vector<unsigned>& pids,
                                                       steady_clock::time_point now) {
  std::optional<double> uptime_s;
  if (const FileText up = files_.read("uptime", 256); up.ok()) {
    uptime_s = parse_uptime_seconds(up.text);
  }
  std::unordered_map<unsigned, Seen> next;
  std::unordered_map<unsigned, std::size_t> done;  // pid -> index in out
  std::vector<HostProcessInfo> out;
  out.reserve(pids.size());
  for (const unsigned pid : pids) {
    if (auto it = done.find(pid); it != done.end()) {
      out.push_back(out[it->second]);
      continue;
    }
    done.emplace(pid, out.size());
    out.push_back(inspect_one(pid, now, uptime_s, next));
  }
  seen_ = std::move(next);
  return out;
}

// The environment is readable only by the owner or root: without it the cgroup still gives the
// Slurm job and step, the pod's UID and the container.
job::JobIdentity ProcessInspector::read_job(const std::string& dir) const {
  const FileText cgroup = files_.read(dir + "/cgroup", kCgroupReadBytes);
  const FileText environ = files_.read(dir + "/environ", kEnvironReadBytes);
  return job::job_identity({cgroup.ok() ? std::string_view(cgroup.text) : std::string_view(),
                            environ.ok() ? job::environ_lookup(environ.text) : job::EnvLookup(),
                            {},
                            hostname_});
}

bool ProcessInspector::holds_gpu_files_or_unknown(unsigned pid) const {
  const LinkTargets links = files_.read_links(std::to_string(pid) + "/fd", kMaxFdsChecked);
  // Cannot tell (fd is owner-only, too many files, or none open as in a zombie): do not call
  // it another process.
  if (!links.ok() || links.truncated || links.targets.empty()) return true;
  for (const std::string& target : links.targets) {
    if (target.rfind("/dev/nvidia", 0) == 0) return true;
  }
  return false;
}

HostProcessInfo ProcessInspector::inspect_one(unsigned pid, steady_clock::time_point now,
                                              std::optional<double> uptime_s,
                                              std::unordered_map<unsigned, Seen>& next) {
  HostProcessInfo info;
  info.pid = pid;
  const std::string dir = std::to_string(pid);

  // A failure to see the process at all: hidden by hidepid, or not in this PID namespace.
  auto not_seen = [&](int error) {
    const bool hidden = is_permission_error(error) || hides_other_users_;
    info.visibility = hidden ? Visibility::kHidden : Visibility::kNotVisible;
    set_all_missing(info, hidden ? Missing::kNoPermission : Missing::kNotAvailable);
    return info;
  };
  if (const int error = files_.probe(dir); error != 0) return not_seen(error);
  const FileText stat_text = files_.read(dir + "/stat", kStatReadBytes);
  if (!stat_text.ok()) return not_seen(stat_text.error);
  const std::optional<ProcStat> st = parse_stat(stat_text.text);

  const auto prev_it = seen_.find(pid);
  const Seen* prev =
      (st && prev_it != seen_.end() && prev_it->second.start_ticks == st->start_ticks)
          ? &prev_it->second
          : nullptr;
  const bool other = prev != nullptr ? prev->other_process
                                     : options_.check_gpu_files && !holds_gpu_files_or_unknown(pid);
  if (other) {
    info.visibility = Visibility::kOtherProcess;
    set_all_missing(info, Missing::kNotAvailable);
    if (st) next[pid] = Seen{st->start_ticks, 0, now, true, {}};
    return info;
  }
  info.visibility = Visibility::kVisible;

  const double hz = static_cast<double>(options_.clock_ticks_per_second);
  if (st) {
    info.comm = clean_text(st->comm);
    info.ppid = st->ppid;
    info.start_ticks = st->start_ticks;
    const std::uint64_t cpu_ticks = st->utime_ticks + st->stime_ticks;
    const double dt = prev != nullptr ? std::chrono::duration<double>(now - prev->when).count() : 0;
    if (prev != nullptr && dt > 0 && cpu_ticks >= prev->cpu_ticks) {
      info.cpu_percent = static_cast<double>(cpu_ticks - prev->cpu_ticks) / hz / dt * 100.0;
      info.cpu_window = CpuWindow::kInterval;
    } else if (const double age = uptime_s.value_or(0) - static_cast<double>(st->start_ticks) / hz;
               uptime_s && age > 0) {
      info.cpu_percent = static_cast<double>(cpu_ticks) / hz / age * 100.0;
      info.cpu_window = CpuWindow::kSinceStart;
    } else {
      info.cpu_percent = Reading<double>::missing(Missing::kNotAvailable);
    }
    info.rss_bytes = st->state == 'Z'
                         ? Reading<std::uint64_t>::missing(Missing::kNotAvailable)
                         : Reading<std::uint64_t>(st->rss_pages * static_cast<std::uint64_t>(
                                                                      options_.page_size_bytes));
    if (boot_time_s_) {
      const auto since_boot_ms = static_cast<std::int64_t>(
          st->start_ticks * 1000 / static_cast<std::uint64_t>(options_.clock_ticks_per_second));
      info.start_time = system_clock::time_point(std::chrono::duration_cast<system_clock::duration>(
          std::chrono::milliseconds(*boot_time_s_ * 1000 + since_boot_ms)));
    } else {
      info.start_time = Reading<system_clock::time_point>::missing(Missing::kNotAvailable);
    }
    info.job = prev != nullptr ? prev->job : read_job(dir);
    next[pid] = Seen{st->start_ticks, cpu_ticks, now, false, info.job};
  } else {
    info.comm = Reading<std::string>::missing(Missing::kError);
    info.ppid = Reading<unsigned>::missing(Missing::kError);
    info.cpu_percent = Reading<double>::missing(Missing::kError);
    info.rss_bytes = Reading<std::uint64_t>::missing(Missing::kError);
    info.start_time = Reading<system_clock::time_point>::missing(Missing::kError);
  }

  const FileText status = files_.read(dir + "/status", kStatusReadBytes);
  const std::optional<unsigned> euid =
      status.ok() ? parse_status(status.text).effective_uid : std::nullopt;
  if (euid) {
    info.uid = *euid;
    info.user = users_.name_of(*euid);
  } else {
    const Missing why = status.ok() ? Missing::kError : missing_for(status.error);
    info.uid = Reading<unsigned>::missing(why);
    info.user = Reading<std::string>::missing(why);
  }

  const std::size_t max = options_.command_line_max_bytes;
  const FileText cmdline = files_.read(dir + "/cmdline", max + 64);
  if (!cmdline.ok()) {
    info.command_line = Reading<std::string>::missing(missing_for(cmdline.error));
  } else if (std::string line = command_line_from_proc(cmdline.text, max); !line.empty()) {
    info.command_line = std::move(line);
  } else if (info.comm) {
    info.command_line = "[" + *info.comm + "]";  // kernel thread or zombie, as ps shows it
  } else {
    info.command_line = Reading<std::string>::missing(Missing::kNotAvailable);
  }
  return info;
}

}  // namespace gpumon::host
