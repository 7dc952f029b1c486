// SPDX-License-Identifier: MIT
#include "cli/process_view.h"

#include <gtest/gtest.h>

#include "cli/test_snapshots.h"

namespace gpumon::cli {
namespace {

using namespace gpumon::cli::testing;

// A torchrun (pid 100) with ranks 201 (GPU 0) and 202 (GPU 1); rank 201 started a helper 301
// that also holds GPU 0; pid 400 of bob on GPU 1, started by a shell that is not listed.
Snapshot job() {
  Snapshot s = empty_snapshot();
  auto add = [&](unsigned gpu, unsigned pid, unsigned ppid, std::uint64_t mem_gib, double cpu,
                 const char* user, const char* cmd) {
    ProcessRow p = visible_process(gpu, pid);
    p.host.ppid = ppid;
    p.gpu.used_memory_bytes = mem_gib << 30;
    p.host.cpu_percent = cpu;
    p.host.user = std::string(user);
    p.host.command_line = std::string(cmd);
    s.processes.push_back(p);
  };
  add(0, 201, 100, 60, 99, "alice", "python train.py --rank 0");
  add(0, 301, 201, 1, 5, "alice", "python helper.py");
  add(1, 202, 100, 70, 98, "alice", "python train.py --rank 1");
  add(1, 400, 50, 2, 300, "bob", "python eval.py");
  return s;
}

std::vector<unsigned> pids(const std::vector<ProcessLine>& lines) {
  std::vector<unsigned> out;
  for (const ProcessLine& l : lines) out.push_back(l.row ? l.row->gpu.pid : l.launcher->pid);
  return out;
}

TEST(ProcessView, DefaultOrderIsByGpuThenPid) {
  EXPECT_EQ(pids(arrange_processes(job(), {}, {})), (std::vector<unsigned>{201, 301, 202, 400}));
}

TEST(ProcessView, SortsBiggestFirstAndReverses) {
  ProcessViewState s;
  s.sort = ProcessSort::kGpuMemory;
  EXPECT_EQ(pids(arrange_processes(job(), s, {})), (std::vector<unsigned>{202, 201, 400, 301}));
  s.sort = ProcessSort::kCpu;
  EXPECT_EQ(pids(arrange_processes(job(), s, {})), (std::vector<unsigned>{400, 201, 202, 301}));
  s.reverse = true;
  EXPECT_EQ(pids(arrange_processes(job(), s, {})), (std::vector<unsigned>{301, 202, 201, 400}));
}

TEST(ProcessView, MissingValuesSortLastEitherWay) {
  Snapshot snap = job();
  snap.processes[3].gpu.sm_util_pct = Reading<unsigned>::missing(Missing::kNotAvailable);
  snap.processes[0].gpu.sm_util_pct = 90U, snap.processes[1].gpu.sm_util_pct = 10U;
  snap.processes[2].gpu.sm_util_pct = 50U;
  ProcessViewState s;
  s.sort = ProcessSort::kSmUtil;
  EXPECT_EQ(pids(arrange_processes(snap, s, {})), (std::vector<unsigned>{201, 202, 301, 400}));
  s.reverse = true;
  EXPECT_EQ(pids(arrange_processes(snap, s, {})), (std::vector<unsigned>{301, 202, 201, 400}));
}

TEST(ProcessView, FiltersByUserCommandPidAndGpu) {
  ProcessViewState s;
  s.filter = "BOB";
  EXPECT_EQ(pids(arrange_processes(job(), s, {})), (std::vector<unsigned>{400}));
  s.filter = "train";
  EXPECT_EQ(pids(arrange_processes(job(), s, {})), (std::vector<unsigned>{201, 202}));
  s.filter = "30";
  EXPECT_EQ(pids(arrange_processes(job(), s, {})), (std::vector<unsigned>{301}));
  s.filter.clear();
  s.gpu = 1;
  EXPECT_EQ(pids(arrange_processes(job(), s, {})), (std::vector<unsigned>{202, 400}));
}

TEST(ProcessView, TreeGroupsRanksUnderTheirLauncherAndChildrenUnderParents) {
  ProcessViewState s;
  s.tree = true;
  EXPECT_EQ(launcher_pids(job()), (std::vector<unsigned>{50, 100}));
  std::map<unsigned, host::ProcessBrief> launchers;
  launchers[100] = host::ProcessBrief{100, 1, 5, "torchrun --nproc_per_node 2 train.py"};
  const Snapshot snap = job();  // the lines point into it
  const auto lines = arrange_processes(snap, s, launchers);
  EXPECT_EQ(pids(lines), (std::vector<unsigned>{100, 201, 301, 202, 400}));
  std::vector<std::size_t> depth;
  for (const auto& l : lines) depth.push_back(l.depth);
  EXPECT_EQ(depth, (std::vector<std::size_t>{0, 1, 2, 1, 0}));
  EXPECT_EQ(lines[0].key(), std::nullopt) << "a launcher cannot be selected";
}

TEST(ProcessView, ParentsInALoopAreListedFlat) {
  Snapshot snap = job();
  snap.processes[0].host.ppid = 301;  // 201 <-> 301: PIDs reused, or a hostile /proc
  ProcessViewState s;
  s.tree = true;
  const auto lines = arrange_processes(snap, s, {});
  EXPECT_EQ(lines.size(), 4U);
}

TEST(ProcessView, SortNamesCycle) {
  ProcessSort s = ProcessSort::kGpu;
  std::vector<std::string> names;
  for (int i = 0; i < 8; ++i, s = next_sort(s)) names.push_back(sort_name(s));
  EXPECT_EQ(names, (std::vector<std::string>{"GPU", "GPU mem", "SM %", "CPU %", "RSS", "time",
                                             "PID", "GPU"}));
}

}  // namespace
}  // namespace gpumon::cli
