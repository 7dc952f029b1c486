// SPDX-License-Identifier: MIT
#include "util/stop_signals.h"

#include <gtest/gtest.h>

#include <csignal>
#include <thread>

namespace gpumon::util {
namespace {

TEST(StopSignals, ASignalIsNotedAndWakesASleeperAtOnce) {
  ScopedStopSignals signals(ScopedStopSignals::Second::kIsNoted);
  EXPECT_FALSE(ScopedStopSignals::stop_requested());
  EXPECT_TRUE(ScopedStopSignals::sleep_for(std::chrono::milliseconds(1)));
  std::thread raiser([] { std::raise(SIGTERM); });
  // Would sleep an hour if the signal did not wake it.
  EXPECT_FALSE(ScopedStopSignals::sleep_for(std::chrono::hours(1)));
  raiser.join();
  EXPECT_EQ(ScopedStopSignals::last_signal(), SIGTERM);
  std::raise(SIGINT);  // a second one is only noted in this mode
  EXPECT_EQ(ScopedStopSignals::last_signal(), SIGINT);
  ScopedStopSignals::clear();
  EXPECT_FALSE(ScopedStopSignals::stop_requested());
  EXPECT_TRUE(ScopedStopSignals::sleep_for(std::chrono::milliseconds(1)));
}

TEST(StopSignals, AHangupStopsAndTheFileSizeLimitBecomesAWriteError) {
  ScopedStopSignals signals(ScopedStopSignals::Second::kIsNoted);
  std::raise(SIGHUP);  // the terminal went away: stop cleanly, as on SIGTERM
  EXPECT_EQ(ScopedStopSignals::last_signal(), SIGHUP);
  struct sigaction xfsz {};
  sigaction(SIGXFSZ, nullptr, &xfsz);
  EXPECT_EQ(xfsz.sa_handler, SIG_IGN);  // a write past `ulimit -f` fails with EFBIG
  // Ignored dispositions survive exec: a child gets them back at their defaults.
  const sigset_t defaults = ScopedStopSignals::child_sigdefault();
  EXPECT_TRUE(sigismember(&defaults, SIGXFSZ));
  EXPECT_TRUE(sigismember(&defaults, SIGPIPE));
}

TEST(StopSignals, TheHandlersGoWithTheObject) {
  struct sigaction before {};
  sigaction(SIGTERM, nullptr, &before);
  { ScopedStopSignals signals; }
  struct sigaction after {};
  sigaction(SIGTERM, nullptr, &after);
  EXPECT_EQ(before.sa_handler, after.sa_handler);
}

}  // namespace
}  // namespace gpumon::util
