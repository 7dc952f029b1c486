// SPDX-License-Identifier: MIT
// The measurement window the sampler benchmarks share: start the sampler, wait for its first
// tick (its one-off reads - static details, first GPM and buffer reads - are left out), let it
// run `seconds`, then stop it. CPU is the sampler thread's, from SamplerStats::thread_cpu_s.
#pragma once

#include <chrono>
#include <thread>

#include "sampler/sampler.h"

namespace gpumon::bench {

struct SamplerWindow {
  SamplerStats first;  ///< after the first tick
  SamplerStats last;   ///< at the end of the window
  double wall_s = 0;
  double cpu_s() const { return last.thread_cpu_s - first.thread_cpu_s; }
  std::uint64_t ticks() const { return last.ticks - first.ticks; }
};

/// Starts `sampler` (not started yet), measures one window and stops it.
inline SamplerWindow measure_window(Sampler& sampler, double seconds) {
  SamplerWindow w;
  sampler.start();
  w.first = sampler.stats();
  while (w.first.ticks == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    w.first = sampler.stats();
  }
  const auto start = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  w.last = sampler.stats();
  w.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  sampler.stop();
  return w;
}

}  // namespace gpumon::bench
