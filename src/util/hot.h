// SPDX-License-Identifier: MIT
// GPUMON_HOT / GPUMON_COLD: where a function's code goes. GCC and Clang put hot functions
// together (.text.hot) and cold ones apart (.text.unlikely). The training loop's per-step calls
// (the step clock, python/src/step_calls.cc) are hot: after a step's work their code is out of
// the caches and TLBs, and code on fewer pages costs fewer misses to bring back.
#pragma once

#if defined(__GNUC__)
#define GPUMON_HOT __attribute__((hot))
#define GPUMON_COLD __attribute__((cold))
#else
#define GPUMON_HOT
#define GPUMON_COLD
#endif
