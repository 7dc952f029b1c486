// SPDX-License-Identifier: MIT
#include "cli/process_signal.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <csignal>
#include <map>

#include "host/map_proc_files.h"

namespace gpumon::cli {
namespace {

// A /proc with one process, pid 4242, whose stat and cmdline the test sets.
class OneProcess : public host::testing::MapFiles {
 public:
  void start(std::uint64_t ticks, const std::string& cmdline) {
    files["4242/stat"] = "4242 (python) S 1 4242 4242 0 -1 0 0 0 0 0 10 5 0 0 20 0 1 0 " +
                         std::to_string(ticks) + " 100 25 0\n";
    files["4242/cmdline"] = cmdline;
  }
};

struct Sent {
  int pid = 0, signal = 0;
};

TEST(ProcessSignal, SendsToTheProcessThatWasChosen) {
  OneProcess proc;
  proc.start(500, std::string("python\0train.py\0", 16));
  SignalRequest r{{4242, 0}, SIGTERM, "python train.py", 500};
  Sent sent;
  const auto msg = send_confirmed_signal(proc, r, [&](int pid, int sig) {
    sent = {pid, sig};
    return 0;
  });
  EXPECT_EQ(msg, "Sent SIGTERM to PID 4242.");
  EXPECT_EQ(sent.pid, 4242);
  EXPECT_EQ(sent.signal, SIGTERM);
}

TEST(ProcessSignal, NotSentWhenThePidIsGoneOrReused) {
  OneProcess proc;
  proc.start(500, std::string("python\0train.py\0", 16));
  SignalRequest r{{4242, 0}, SIGKILL, "python train.py", 500};
  bool called = false;
  const KillFn never = [&](int, int) { return called = true, 0; };
  proc.start(900, std::string("python\0train.py\0", 16));  // same command, started later
  EXPECT_EQ(send_confirmed_signal(proc, r, never),
            "PID 4242 is now another process: SIGKILL not sent.");
  proc.start(500, std::string("bash\0", 5));
  EXPECT_EQ(send_confirmed_signal(proc, r, never),
            "PID 4242 is now another process: SIGKILL not sent.");
  proc.files.clear();
  EXPECT_EQ(send_confirmed_signal(proc, r, never), "PID 4242 has exited: SIGKILL not sent.");
  SignalRequest unknown{{4242, 0}, SIGKILL, "python train.py", {}};  // the row had no start
  proc.start(500, std::string("python\0train.py\0", 16));
  EXPECT_EQ(send_confirmed_signal(proc, unknown, never),
            "PID 4242 is now another process: SIGKILL not sent.");
  EXPECT_FALSE(called);
}

TEST(ProcessSignal, SaysWhyTheKernelRefused) {
  OneProcess proc;
  proc.start(500, std::string("python\0train.py\0", 16));
  SignalRequest r{{4242, 0}, SIGTERM, "python train.py", 500};
  const auto msg = send_confirmed_signal(proc, r, [](int, int) { return errno = EPERM, -1; });
  EXPECT_NE(msg.find("Cannot send SIGTERM to PID 4242: not permitted"), std::string::npos) << msg;
}

}  // namespace
}  // namespace gpumon::cli
