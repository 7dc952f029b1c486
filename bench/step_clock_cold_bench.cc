// SPDX-License-Identifier: MIT
// The step clock's work for one step when the caches are cold, as in a training loop whose step
// has evicted gpumon's code and data: before each timed step a sweep over --sweep-mb of memory,
// then fetch_begin(), fetch_end(), step_deferred() (what mon.wrap() and mon.step() run), timed
// with rdtscp (a clock read before the step would warm the very vDSO page it measures). Prints
// JSON: the median and quartiles in ns.
// usage: gpumon_bench_step_clock_cold [--reps N] [--sweep-mb M]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "client/hand_over_schedule.h"
#include "client/step_clock.h"

#if defined(__x86_64__)
#include <x86intrin.h>

namespace {

using gpumon::client::HandOverSchedule;
using gpumon::client::StepClock;

std::uint64_t ticks() {
  unsigned aux = 0;
  return __rdtscp(&aux);
}

// One step's calls, as the Python step calls make them, with the hand-over's drain when due.
void one_step(StepClock& clock) {
  clock.fetch_begin();
  clock.fetch_end();
  clock.step_deferred();
  if (clock.queued() >= HandOverSchedule::kSteps) clock.drain([](const std::string&) {});
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 3000;
  std::size_t sweep_mb = 48;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--reps") == 0) reps = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--sweep-mb") == 0) sweep_mb = std::strtoul(argv[i + 1], nullptr, 10);
  }
  if (reps < 10 || sweep_mb == 0) {
    std::fprintf(stderr, "usage: %s [--reps N>=10] [--sweep-mb M>0]\n", argv[0]);
    return 2;
  }
  std::vector<char> sweep(sweep_mb << 20, 1);
  gpumon::client::StepClockOptions options;
  options.keep_recent = 64;  // as the Python Monitor's OOM ring
  StepClock clock(options);
  std::vector<std::uint64_t> times;
  const auto t0 = std::chrono::steady_clock::now();
  const std::uint64_t c0 = ticks();
  for (int i = 0; i < reps; ++i) {
    for (std::size_t j = 0; j < sweep.size(); j += 64) sweep[j] = static_cast<char>(sweep[j] + 1);
    const std::uint64_t a = ticks();
    one_step(clock);
    const std::uint64_t b = ticks();
    if (i >= 100) times.push_back(b - a);  // past the first steps' page faults
  }
  const double ns_per_tick =
      std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() /
      static_cast<double>(ticks() - c0);
  const auto quartiles = [&](std::vector<std::uint64_t>& v) {
    std::sort(v.begin(), v.end());
    const auto at = [&](std::size_t k) { return static_cast<double>(v[k]) * ns_per_tick; };
    char buf[128];
    std::snprintf(buf, sizeof buf, "{\"median\": %.0f, \"p25\": %.0f, \"p75\": %.0f}",
                  at(v.size() / 2), at(v.size() / 4), at(3 * v.size() / 4));
    return std::string(buf);
  };
  std::printf("{\"reps\": %d, \"sweep_mb\": %zu, \"steady_ns\": %s}\n", reps, sweep_mb,
              quartiles(times).c_str());
  return 0;
}

#else
int main() {
  std::puts("{\"skipped\": \"no TSC on this CPU\"}");
  return 0;
}
#endif
