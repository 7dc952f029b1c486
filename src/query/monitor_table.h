// SPDX-License-Identifier: MIT
// The scrolling tables of `gpumon dmon` and `gpumon pmon`, laid out byte for byte as
// nvidia-smi's (testdata/nvidia-smi/h200/modes/dmon*.txt, pmon*.txt), so scripts that cut their
// columns switch by one word. Pure formatting: the values come in, lines go out.
//
// dmon: a `# gpu` column, then 7-character columns in nvidia-smi's fixed order of the -s
// letters (p u c v m e t), two header lines (names, units), each line ending in a space.
// pmon: one line per process per GPU (a line of dashes for a GPU with none); its header columns
// sit one character right of the data's, as nvidia-smi's do.
// A value gpumon does not read (BAR1, CC protected memory, per-process
// encoder) is `-`, as nvidia-smi prints a value it cannot get.
//
// Thread-safety: pure functions.
#pragma once

#include <chrono>
#include <cstdint>
#include <ctime>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpu/extra_reads.h"
#include "gpu/gpu_types.h"
#include "gpu/metric_group.h"
#include "query/query_error.h"

namespace gpumon::query {

/// -o: a date (YYYYMMDD) and/or time (HH:MM:SS) column before the GPU's.
struct StampColumns {
  bool date = false;
  bool time = false;
};

/// What one dmon line shows of one GPU.
struct DmonInput {
  unsigned gpu = 0;
  DeviceSample sample;
  PcieThroughput pcie;
  /// The same GPU's sample of the previous line, for the violation columns (rates over the
  /// interval); nullptr on the first line, where nvidia-smi prints 0.
  const DeviceSample* previous = nullptr;
};

/// The -s letters, checked: "puc" by default; any of p u c v m e t.
Expected<std::string> parse_dmon_select(std::string_view letters);
/// The groups a dmon with `select` reads, and whether it needs PCIe throughput (`t`).
MetricSet dmon_metrics(std::string_view select);
bool dmon_needs_pcie(std::string_view select);

/// The two header lines of a dmon table.
std::string dmon_header(std::string_view select, StampColumns stamp);
/// One line of a dmon table; `local` is the sample's local time (for -o D/T).
std::string dmon_line(std::string_view select, StampColumns stamp, const DmonInput& in,
                      const std::tm& local);

/// One pmon line's process, or nullopt for a GPU with none.
struct PmonProcess {
  unsigned pid = 0;
  char type = 'C';                 ///< C compute (gpumon lists compute processes)
  std::optional<unsigned> sm_pct;  ///< newest driver sample in the interval, if any
  std::optional<unsigned> mem_pct;
  std::optional<std::uint64_t> fb_bytes;
  std::string name;  ///< the executable's base name
};

/// -s for pmon: "u" by default, any of u m.
Expected<std::string> parse_pmon_select(std::string_view letters);
std::string pmon_header(std::string_view select, StampColumns stamp);
std::string pmon_line(std::string_view select, StampColumns stamp, unsigned gpu,
                      const std::optional<PmonProcess>& process, const std::tm& local);

/// The processes of one GPU as pmon shows them: `processes` with the newest utilization sample
/// of each pid from `utilization` (nullopt where the driver had none), names cut to their base.
std::vector<PmonProcess> pmon_processes(const std::vector<GpuProcess>& processes,
                                        const std::vector<ProcessUtilization>& utilization);

}  // namespace gpumon::query
