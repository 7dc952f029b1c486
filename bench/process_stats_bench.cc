// SPDX-License-Identifier: MIT
// CPU cost of one ProcessWatcher sample (docs/PERFORMANCE.md, "Host memory and CPU"): reading a
// process with N forked workers (each holding 64 MB of touched memory, as DataLoader workers
// hold their copy of the dataset) and the host's memory, as the watcher does once a second per
// rank. Thread CPU time, 20 blocks of 200 samples; the median per sample and its 95 % bootstrap
// interval, for 0, 2 and 8 workers interleaved (A B C A B C ...).
//
// usage: gpumon_bench_process_stats [BLOCKS]
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "bench_stats.h"
#include "host/process_stats.h"

namespace {

double thread_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

std::vector<pid_t> fork_workers(int n) {
  std::vector<pid_t> pids;
  for (int i = 0; i < n; ++i) {
    const pid_t p = ::fork();
    if (p == 0) {
      const std::size_t bytes = 64u << 20;
      char* mem = static_cast<char*>(std::malloc(bytes));
      std::memset(mem, 1, bytes);
      ::pause();
      std::_Exit(0);
    }
    pids.push_back(p);
  }
  return pids;
}

}  // namespace

int main(int argc, char** argv) {
  const int blocks = argc > 1 ? std::atoi(argv[1]) : 20;
  constexpr int kPerBlock = 200;
  const gpumon::host::DiskProcFiles proc, cgroup("/sys/fs/cgroup");
  const gpumon::host::ProcessStatsReader reader(proc, cgroup,
                                                gpumon::host::ProcessStatsReader::system_options());
  const int arms[] = {0, 2, 8};
  std::vector<std::vector<double>> us(3);
  std::vector<pid_t> workers;
  int have = 0;
  for (int b = 0; b < blocks; ++b) {
    for (int a = 0; a < 3; ++a) {
      while (have < arms[a]) {
        for (pid_t p : fork_workers(1)) workers.push_back(p);
        ++have;
      }
      while (have > arms[a]) {
        ::kill(workers.back(), SIGKILL);
        ::waitpid(workers.back(), nullptr, 0);
        workers.pop_back();
        --have;
      }
      ::usleep(50000);  // the workers have touched their memory
      const double t0 = thread_cpu_s();
      for (int i = 0; i < kPerBlock; ++i) {
        const auto tree = reader.read_tree(::getpid());
        const auto host = reader.read_host(::getpid());
        if (!tree || tree->workers != arms[a] || !host.mem_available_bytes) {
          std::fprintf(stderr, "unexpected read: %d workers\n", tree ? tree->workers : -1);
          return 1;
        }
      }
      us[static_cast<std::size_t>(a)].push_back((thread_cpu_s() - t0) / kPerBlock * 1e6);
    }
  }
  for (pid_t p : workers) ::kill(p, SIGKILL), ::waitpid(p, nullptr, 0);
  std::printf("workers,median_us_per_sample,ci_low,ci_high,blocks\n");
  for (int a = 0; a < 3; ++a) {
    const auto& v = us[static_cast<std::size_t>(a)];
    const auto [lo, hi] = gpumon::bench::bootstrap_median_ci(v);
    std::printf("%d,%.1f,%.1f,%.1f,%zu\n", arms[a], gpumon::bench::median(v), lo, hi, v.size());
  }
  return 0;
}
