// SPDX-License-Identifier: MIT
// eventually(): a test waits for something to happen by polling the condition itself, never by
// sleeping a guessed time. Test-only; header-only. The shell and Python tests have the same
// helper: wait_for.sh and wait_for.py beside this file.
#pragma once

#include <chrono>
#include <functional>
#include <thread>

namespace gpumon::testing_util {

/// Polls `done` every 5 ms until it holds; the limit only ends a test that would otherwise hang
/// (never a margin a loaded machine could miss). Its last answer.
inline bool eventually(const std::function<bool()>& done,
                       std::chrono::milliseconds limit = std::chrono::seconds(60)) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return done();
}

}  // namespace gpumon::testing_util
