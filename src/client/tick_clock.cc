// SPDX-License-Identifier: MIT
#include "client/tick_clock.h"

#include <cmath>
#include <cstdlib>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <x86intrin.h>
#define GPUMON_HAVE_TSC 1
#endif

namespace gpumon::client {
namespace {

#ifdef GPUMON_HAVE_TSC
std::uint64_t read_tsc() {
  return __rdtsc();
}

// CPUID 0x80000007, EDX bit 8: the TSC runs at a constant rate in every P-, C- and T-state.
bool tsc_is_invariant() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid_max(0x80000000, nullptr) < 0x80000007) return false;
  if (__get_cpuid(0x80000007, &a, &b, &c, &d) == 0) return false;
  return (d & (1U << 8)) != 0;
}
#endif

TickClock::Ticks default_ticks() {
  const char* choice = std::getenv("GPUMON_STEP_CLOCK");
  if (choice != nullptr && std::strcmp(choice, "steady") == 0) return nullptr;
#ifdef GPUMON_HAVE_TSC
  if (tsc_is_invariant()) return &read_tsc;
#endif
  return nullptr;
}

double nanoseconds(TickClock::Steady::duration d) {
  return std::chrono::duration<double, std::nano>(d).count();
}

}  // namespace

TickClock::TickClock() : TickClock(default_ticks()) {}

TickClock::TickClock(Ticks ticks) : ticks_(ticks) {
  if (ticks_ != nullptr) first_ = read_pair();
}

TickClock::Pair TickClock::read_pair() const {
  // The tightest of three tries: a try the thread was preempted in is wide.
  Pair best;
  std::uint64_t best_width = ~std::uint64_t{0};
  for (int i = 0; i < 3; ++i) {
    const std::uint64_t before = ticks_();
    const time_point at = Steady::now();
    const std::uint64_t width = ticks_() - before;
    if (width < best_width) {
      best_width = width;
      best = {before + width / 2, at};
    }
  }
  return best;
}

void TickClock::distrust() {
  ticks_ = nullptr;
  ns_per_tick_ = 0;
}

void TickClock::resync() {
  if (ticks_ == nullptr) return;
  const Pair p = read_pair();
  if (ns_per_tick_ != 0) {
    // Where the counter says we are, against steady_clock.
    const auto since = p.at - anchor_.at;
    const double off = nanoseconds(p.at - now_at(p.ticks));
    if (std::abs(off) > nanoseconds(kMaxDisagreement) + nanoseconds(since) * 1e-4) {
      distrust();
      return;
    }
  } else if (p.at - first_.at < kCalibration) {
    return;  // too short a baseline for the rate
  }
  if (p.ticks <= first_.ticks) {  // the counter stood still or went back
    distrust();
    return;
  }
  const double rate = nanoseconds(p.at - first_.at) / static_cast<double>(p.ticks - first_.ticks);
  if (!(rate > 0.01 && rate < 100)) {  // a 10 MHz to 100 GHz counter, or not a clock
    distrust();
    return;
  }
  ns_per_tick_ = rate;
  anchor_ = p;
}

}  // namespace gpumon::client
