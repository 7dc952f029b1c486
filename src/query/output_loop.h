// SPDX-License-Identifier: MIT
// The output side every printing command of gpumon query shares (--query-gpu, -q, dmon, pmon):
// the -f file, and a sampling loop that writes to a stream and ends cleanly when the reader goes
// away (`| head`), reporting any other write failure with its cause.
#pragma once

#include <chrono>
#include <cstdint>
#include <fstream>
#include <functional>
#include <optional>
#include <ostream>
#include <string>

#include "query/loop_schedule.h"
#include "query/query_error.h"

namespace gpumon::query {

/// Opens `path` for writing (truncated) into `file`; a usage error naming the cause if it cannot.
Expected<std::ostream*> open_output_file(const std::string& path, std::ofstream& file);

/// run_loop that writes: `begin(sink)` once, then `each(sink)` per sample, flushing after each.
/// Returns kExitOk when the loop ends (done, stopped, or the reader went away: EPIPE), else
/// kExitIoError after saying on `err` why writing failed.
int write_loop(LoopClock& clock, std::optional<std::chrono::milliseconds> interval,
               std::optional<std::uint64_t> samples, std::ostream& sink, std::ostream& err,
               const std::function<void(std::ostream&)>& begin,
               const std::function<void(std::ostream&)>& each);

}  // namespace gpumon::query
