// SPDX-License-Identifier: MIT
#include "query/output_loop.h"

#include <cerrno>
#include <cstring>

namespace gpumon::query {

Expected<std::ostream*> open_output_file(const std::string& path, std::ofstream& file) {
  file.open(path, std::ios::out | std::ios::trunc | std::ios::binary);
  if (!file) return usage_error("cannot open " + path + " for writing: " + std::strerror(errno));
  return static_cast<std::ostream*>(&file);
}

int write_loop(LoopClock& clock, std::optional<std::chrono::milliseconds> interval,
               std::optional<std::uint64_t> samples, std::ostream& sink, std::ostream& err,
               const std::function<void(std::ostream&)>& begin,
               const std::function<void(std::ostream&)>& each) {
  // errno is cleared just before writing so that, when the stream fails, it holds the cause.
  int write_errno = 0;
  auto emit = [&](const std::function<void(std::ostream&)>& write) {
    errno = 0;
    write(sink);
    sink.flush();
    if (sink.good()) return true;
    write_errno = errno;
    return false;
  };
  if (emit(begin)) run_loop(clock, interval, samples, [&] { return emit(each); });
  if (write_errno == 0 && sink.good()) return kExitOk;
  // The reader went away (`| head -3`): a normal way for a loop to end, not an error.
  if (write_errno == EPIPE) return kExitOk;
  err << "gpumon: cannot write the output: "
      << (write_errno != 0 ? std::strerror(write_errno) : "write failed") << "\n";
  err.flush();
  return kExitIoError;
}

}  // namespace gpumon::query
